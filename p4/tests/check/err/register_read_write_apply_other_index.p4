/* A `read` and the `write` right after it in `apply` go into one synthesized action (bf-p4c's
 * ActionSynthesisPolicy), where RegisterReadWrite requires one index for both ("uses of all
 * registers within a single action have to use the same addressing"): here they differ. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<8>>(256, 0) r;
    apply {
        meta.a16 = r.read(hdr.ipv4.ttl);
        r.write(hdr.ipv4.protocol, meta.a16 + 1);
        ig_tm_md.ucast_egress_port = 1;
    }
}

#include "../tail.p4inc"
