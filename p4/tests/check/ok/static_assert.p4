/* static_assert (p4c's core.p4), both forms: evaluated at compile time, true when it holds. */
#include "../head.p4inc"

const bit<8> WIDTH = 8;
const bool width_ok = static_assert(WIDTH == 8, "WIDTH must be 8");
const bool size_ok = static_assert(sizeInBits(bit<16>) == 16);

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (width_ok && size_ok) {
            meta.b8 = WIDTH;
        }
    }
}

#include "../tail.p4inc"
