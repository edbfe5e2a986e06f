/* A static_assert that does not hold fails the compilation with its message. */
#include "../head.p4inc"

const bit<8> WIDTH = 16;
const bool width_ok = static_assert(WIDTH == 8, "WIDTH must be 8");

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { }
}

#include "../tail.p4inc"
