/* A table's `@selector_max_group_size(n)` and `@selector_num_max_groups(n)` size the selector
   it is implemented by when that selector's constructor does not (the deprecated three-argument
   form, or a profile and hash only): bf-p4c extract_maupipe.cpp `createAttached` reads the two
   pragmas on the match table, then lets the constructor's `max_group_size`/`num_groups`
   override them. `old_sel` takes 128 members in 8 groups from the pragmas; `new_sel` keeps the
   constructor's 16 and 4 whatever the pragmas say; `@pragma` spelling works the same. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<14>>(HashAlgorithm_t.CRC16) old_hash;
    ActionSelector(1024, old_hash, SelectorMode_t.FAIR) old_sel;
    Hash<bit<14>>(HashAlgorithm_t.CRC16) new_hash;
    ActionProfile(64) new_prof;
    ActionSelector(new_prof, new_hash, SelectorMode_t.FAIR, 16, 4) new_sel;

    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    @selector_max_group_size(128)
    @pragma selector_num_max_groups 8
    table ecmp {
        key = { hdr.ipv4.dst_addr : exact; hdr.ipv4.src_addr : selector; }
        actions = { fwd; }
        size = 64;
        implementation = old_sel;
    }
    @selector_max_group_size(512) @selector_num_max_groups(2)
    table lag {
        key = { hdr.ipv4.protocol : exact; hdr.ipv4.src_addr : selector; }
        actions = { fwd; }
        size = 64;
        implementation = new_sel;
    }
    apply {
        ecmp.apply();
        lag.apply();
    }
}

#include "../tail.p4inc"
