/* Typedef and constant cycles are reported, not followed forever. */
#include "../head.p4inc"

typedef loop_b loop_a;
typedef loop_a loop_b;
const bit<8> C1 = C2;
const bit<8> C2 = C1;

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    loop_a x;
    apply {
        meta.b8 = C1;
    }
}

#include "../tail.p4inc"
