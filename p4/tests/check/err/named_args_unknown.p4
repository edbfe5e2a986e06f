/* A named argument must name a parameter of the callee. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set2(bit<8> p, bit<8> q) { meta.b8 = p + q; }
    apply { set2(p = 0x11, z = 0x22); }
}

#include "../tail.p4inc"
