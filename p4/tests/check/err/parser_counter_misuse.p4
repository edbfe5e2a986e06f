/* ParserCounter misuse that bf-p4c refuses: flags outside a select, a non-constant decrement,
   a Tofino 1 mask above 7, a counter outside a parser. */
#define CUSTOM_PARSER
#include "../head.p4inc"

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pc.set(hdr.ethernet.ether_type, 255, 0, 9, 0);
        meta.flag = pc.is_zero();
        pc.decrement(hdr.ethernet.dst_addr[7:0]);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    ParserCounter() stray;
    apply { }
}

#include "../tail.p4inc"
