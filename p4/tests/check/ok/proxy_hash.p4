/* `proxy_hash = Hash<..>(..)` (the SDE's tna_proxy_hash): accepted; the warning says pisa
   compares the whole key where the hardware compares a hash of it (so a collision hits there). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table t {
        key = { hdr.ipv4.dst_addr : exact; hdr.ipv4.src_addr : exact; }
        actions = { fwd; NoAction; }
        size = 1024;
        default_action = NoAction();
        proxy_hash = Hash<bit<32>>(HashAlgorithm_t.CRC32);
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
