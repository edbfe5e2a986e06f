/* A stack of header unions (P4_16 §8.21) is refused: pisa models header unions in structs
   only, not the per-element union validity a stack of them needs. */
#include "../head.p4inc"

header_union l2_u {
    ethernet_h eth;
    vlan_h vlan;
}
struct stacked_t {
    l2_u[2] tags;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

#include "../tail.p4inc"
