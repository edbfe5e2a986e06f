/* @selector_max_group_size takes 1 to 119040 (992 RAM words of 120 members; bf-p4c extract_maupipe.cpp createAttached). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<51>>(HashAlgorithm_t.CRC32) wide_hash;
    ActionProfile(512) wide_prof;
    ActionSelector(wide_prof, wide_hash, SelectorMode_t.RESILIENT, 240, 2) wide_sel;
    Hash<bit<14>>(HashAlgorithm_t.CRC16) lag_hash;
    ActionProfile(64) lag_prof;
    ActionSelector(lag_prof, lag_hash, SelectorMode_t.FAIR, 8, 16) lag_sel;

    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table ecmp {
        key = { hdr.ipv4.dst_addr : exact; hdr.ipv4.src_addr : selector; }
        actions = { fwd; }
        size = 64;
        implementation = wide_sel;
    }
    @selector_max_group_size(119041)
    table lag {
        key = { ig_tm_md.ucast_egress_port : exact; hdr.ipv4.protocol : selector; }
        actions = { fwd; }
        size = 64;
        implementation = lag_sel;
    }
    apply {
        ecmp.apply();
        lag.apply();
    }
}

#include "../tail.p4inc"
