/* `this.address()` is Tofino 2's (t2na.p4): Tofino 1's stateful ALU has no address output
 * source (tofino-model `kOutSAddr` is illegal on Tofino), so it is refused with the reason.
 * Tofino 2 runs it: p4/tests/stf_tf2/salu_address.p4. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<16>>(1024, 0) r;
    RegisterAction<bit<32>, bit<16>, bit<32>>(r) at = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = this.address();
            v = v + 1;
        }
    };
    apply {
        hdr.ipv4.src_addr = at.execute(meta.a16);
        ig_tm_md.ucast_egress_port = 1;
    }
}

#include "../tail.p4inc"
