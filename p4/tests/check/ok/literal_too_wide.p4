/* A width-prefixed literal wider than its width: a warning (as p4c gives), the low bits used
   (8w300 is 44). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.ipv4.ttl = 8w300;
    }
}

#include "../tail.p4inc"
