/* A header extracted again in a state that some paths reach after an extract of it and others
   without. bf-p4c converts the parse graph depth first, select cases in order, and keeps a
   state once one path converted it: here `via_b` reaches `again` first (no earlier extract of
   ipv4), so `again` is kept, and the path through `via_a` extracts ipv4 twice. On Tofino 1
   bf-p4c only warns of that re-assignment (`check_parser_multi_write.cpp`), which pisa
   repeats. */
#define CUSTOM_PARSER
#include "../head.p4inc"
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x8100 : via_b;
            default : via_a;
        }
    }
    state via_b {
        transition again;
    }
    state via_a {
        pkt.extract(hdr.ipv4);
        transition again;
    }
    state again {
        pkt.extract(hdr.ipv4);
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
