/* A generic struct is used specialised, with one type argument per type parameter
   (P4_16 §7.2.11): `pair_t` alone is refused. */
#include "../head.p4inc"

struct pair_t<T> {
    T lo;
    T hi;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        pair_t p = { meta.b8, meta.b8 };
        ig_tm_md.ucast_egress_port = 1;
    }
}

#include "../tail.p4inc"
