/* Tofino 1 parser extractors OR into their container, so a later write of the all-ones
 * constant (`meta.flag = true`, `meta.b8 = 0xff`) after a field was set gives what an
 * overwrite would, and bf-p4c accepts it (the opposite order is refused:
 * rejected/parser_write_after_ones.p4). */
#define CUSTOM_PARSER
#include "../head.p4inc"

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        meta.flag = hdr.ethernet.dst_addr[0:0] == 1;
        meta.b8 = hdr.ethernet.src_addr[7:0];
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        meta.flag = true;
        meta.b8 = 0xff;
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (meta.flag) { hdr.ipv4.ttl = meta.b8; }
        ig_tm_md.ucast_egress_port = 1;
    }
}

#include "../tail.p4inc"
