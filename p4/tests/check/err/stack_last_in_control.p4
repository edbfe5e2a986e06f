/* A header stack's `.last` and `.lastIndex` may only be used in a parser (P4_16 "Header
   stacks"), as p4c says; in a control they are refused. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        meta.a16 = hdr.vlan.last.tci;
        meta.b8 = (bit<8>)hdr.vlan.lastIndex;
    }
}

#include "../tail.p4inc"
