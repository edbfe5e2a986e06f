/* `int` constants are evaluated in 128-bit signed arithmetic (P4's `int` is unbounded): a result
   outside that range is refused, never wrapped ((1 << 127) >> 124 is 8 in P4; wrapping made it
   -8, and 0xF8 after the cast). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        meta.b8 = (bit<8>)((1 << 126) >> 123);
        meta.b8 = (bit<8>)((1 << 127) >> 124);
        meta.b8 = (bit<8>)((1 << 127) + (1 << 127));
    }
}

#include "../tail.p4inc"
