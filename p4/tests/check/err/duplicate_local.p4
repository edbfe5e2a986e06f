/* Two declarations of one name in a scope are an error (the first one stays). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action a() { meta.b8 = 1; }
    action a() { meta.b8 = 2; }
    apply {
        bit<8> x = 1;
        bit<8> x = 2;
        meta.b8 = x;
    }
}

#include "../tail.p4inc"
