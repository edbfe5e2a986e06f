/* Two deparser checksum updates of one field: an unconditional one, then a conditional one.
   bf-p4c keeps the unconditional update and deletes the conditional one; pisa does the same
   (the deparser keeps one update of hdr.ipv4.hdr_checksum) and warns. A conditional update
   of another field, and one before the unconditional update, stay. */
#define CUSTOM_DEPARSER
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        meta.flag = hdr.ipv4.ttl == 1;
        ig_tm_md.ucast_egress_port = 1;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() full;
    Checksum() partial;
    apply {
        if (meta.flag) {
            hdr.ipv4.hdr_checksum = partial.update({hdr.ipv4.src_addr});
        }
        hdr.ipv4.hdr_checksum = full.update({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        if (meta.flag) {
            hdr.ipv4.hdr_checksum = partial.update({hdr.ipv4.src_addr});
            hdr.vlan[0].tci = partial.update({hdr.ipv4.dst_addr});
        }
        pkt.emit(hdr);
    }
}

#include "../tail.p4inc"
