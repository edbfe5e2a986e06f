/* A Tofino 1 parser writes a field at most once per packet (zero initialisation aside): a
   metadata field set in one state and again in a later one is refused, as by bf-p4c. */
#define CUSTOM_PARSER
#include "../head.p4inc"

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        meta.b8 = 0;
        pkt.extract(hdr.ethernet);
        meta.b8 = 1;
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        meta.b8 = 2;
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { hdr.ipv4.ttl = meta.b8; }
}

#include "../tail.p4inc"
