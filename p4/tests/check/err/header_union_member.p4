/* Every member of a header union is a header (P4_16 §7.2.4). */
#include "../head.p4inc"

header_union bad_u {
    ethernet_h eth;
    bit<8> tag;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

#include "../tail.p4inc"
