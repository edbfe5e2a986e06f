/* A header with two varbit fields (P4_16 allows one), a varbit in a metadata struct, and one
   of 12 bits (Tofino extracts whole bytes). */
#include "../head.p4inc"

header two_h { varbit<32> a; bit<8> b; varbit<32> c; }
struct md_t { varbit<16> v; }
header odd_h { varbit<12> x; bit<4> y; }

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    two_h two;
    md_t md;
    odd_h odd;
    apply { }
}

#include "../tail.p4inc"
