/* ParserPriority belongs to a parser, and set() takes one bit<3>: a wider value is refused. */
#include "../head.p4inc"
#define CUSTOM_PARSER

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserPriority() prio;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        prio.set(hdr.ethernet.ether_type);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    ParserPriority() late;
    apply { ig_tm_md.ucast_egress_port = 1; }
}

#include "../tail.p4inc"
