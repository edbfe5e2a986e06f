/* `alpm = X` and `atcam = X` table properties, the older spelling of `implementation = X` for
   an Alpm / Atcam layout that the SDE's bri_handle uses (on one table, beside an
   ActionSelector): accepted with the layout warning, the table matching as written; given
   both, the ALPM layout (with its pre-classifier) sizes the table. A property naming the wrong
   kind of instance is refused (check/err/layout_property_wrong_kind). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Alpm(number_partitions = 2, subtrees_per_partition = 2) al;
    Atcam(2) at;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sel_hash;
    ActionProfile(64) prof;
    ActionSelector(prof, sel_hash, SelectorMode_t.FAIR, 4, 16) sel;

    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table routes {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { fwd; NoAction; }
        size = 128;
        alpm = al;
        default_action = NoAction();
    }
    table both {
        key = { hdr.ipv4.dst_addr : exact; hdr.ipv4.src_addr : lpm; hdr.ipv4.protocol : selector; }
        actions = { fwd; }
        size = 128;
        implementation = sel;
        atcam = at;
        alpm = al;
    }
    apply {
        routes.apply();
        both.apply();
    }
}

#include "../tail.p4inc"
