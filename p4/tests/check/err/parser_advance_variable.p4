/* `advance` by a distance read from the packet: Tofino's parser shifts by a constant per
   state, and bf-p4c refuses a distance it cannot fold to a constant (`parde/extract_parser.cpp`,
   `rewriteAdvance`: "Advancing by a non-constant distance is not supported"). */
#define CUSTOM_PARSER
#include "../head.p4inc"
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        pkt.advance(((bit<32>)hdr.ipv4.ihl - 5) << 5);
        transition accept;
    }
}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}
#include "../tail.p4inc"
