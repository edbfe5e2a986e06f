/* `@dynamic_table_key_masks(1)` (the SDE's tna_dkm): bf-p4c lets the control plane mask bits
   of the exact key at run time. pisa accepts the table and matches the key in full; the warning
   says so (pisa's runtime API has no key-mask call), instead of calling it a layout matter. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    @dynamic_table_key_masks(1)
    table t {
        key = { hdr.ipv4.dst_addr : exact; hdr.ipv4.protocol : exact; }
        actions = { fwd; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
