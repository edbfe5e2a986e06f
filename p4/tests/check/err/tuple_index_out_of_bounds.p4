/* A tuple's index is a compile-time constant within its length (P4_16 §7.2.8). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        tuple<bit<8>, bit<8>> t = { meta.b8, meta.b8 };
        meta.b8 = t[2];
    }
}

#include "../tail.p4inc"
