/* bit<0> is rejected, as bf-p4c's frontend does ("Illegal bit size"), even in an unused header. */
#include "../head.p4inc"

header unused_h { bit<0> z; bit<8> y; }

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
