/* A constant that does not fit its type is an error even when it is never used. */
#include "../head.p4inc"

const bit<8> WIDE = 256;

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        meta.b8 = hdr.ipv4.ttl;
    }
}

#include "../tail.p4inc"
