/* A stack of header unions is indexed with constants (`tags[0].vlan`) or, in a parser,
   extracted through `.next`; the rest of its run-time cursor (`.last`, `push_front`,
   `pop_front`) is refused with the reason. */
#include "../head.p4inc"

header_union l2_u {
    ethernet_h eth;
    vlan_h vlan;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        l2_u[2] tags;
        tags[0].vlan.setValid();
        tags.push_front(1);
        ig_tm_md.ucast_egress_port = 1;
    }
}

#include "../tail.p4inc"
