/* `/` and `%` are defined on `bit<W>` and on non-negative `int` only (P4_16 "Arbitrary-precision
   integers", "Operations on signed integers" has neither): signed values at run time and at
   compile time, and negative `int` constants, are refused as p4c refuses them. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        int<8> s = (int<8>)meta.b8;
        meta.b8 = (bit<8>)(s / 4);
        meta.b8 = (bit<8>)(s % 4);
        meta.b8 = (bit<8>)(-7 / 2);
        meta.b8 = (bit<8>)(-7 % 2);
        meta.b8 = (bit<8>)(-8s7 / 8s2);
        meta.b8 = meta.b8 / -1;
    }
}

#include "../tail.p4inc"
