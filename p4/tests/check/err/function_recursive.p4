/* A function that calls itself is refused (P4_16 forbids recursion; inlining would not end). */
#include "../head.p4inc"

bit<8> down(in bit<8> x) {
    if (x == 0) {
        return 0;
    }
    return down(x - 1);
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { meta.b8 = down(meta.b8); }
}

#include "../tail.p4inc"
