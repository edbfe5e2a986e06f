/* A `read` and a `write` of one register in `apply` with another statement between them: bf-p4c
 * merges a write into the read's synthesized action only when it is the very next statement
 * (ActionSynthesisPolicy::isRegisterWriteAfterRead), so here they stay two actions accessing
 * the register on one path, which one stateful ALU cannot serve. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<8>>(256, 0) r;
    apply {
        meta.a16 = r.read(hdr.ipv4.ttl);
        ig_tm_md.ucast_egress_port = 1;
        r.write(hdr.ipv4.ttl, meta.a16 + 1);
    }
}

#include "../tail.p4inc"
