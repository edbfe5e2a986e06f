/* A value set larger than the parser's TCAM, and one whose type does not fit its select key. */
#define CUSTOM_PARSER
#include "../head.p4inc"

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    value_set<bit<16>>(300) too_big;
    value_set<bit<8>>(4) too_narrow;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            too_narrow : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { }
}

#include "../tail.p4inc"
