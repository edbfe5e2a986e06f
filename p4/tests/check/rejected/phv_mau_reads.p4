/* Fields the MAU reads must be in containers the MAU can read and the parser fill: on Tofino 1
   not in tagalong ones (3200 bits for one gress), on Tofino 2 not in CLOTs (4096 bits, the
   normal and mocha containers). Here the MAU copies nine 64-byte headers extracted on one
   path, 4608 bits at the end of parsing: refused on both targets. */
#define CUSTOM_PARSER
#define CUSTOM_DEPARSER
#include "../head.p4inc"

header wide_h {
    bit<256> a;
    bit<256> b;
}

struct wide_headers_t {
    ethernet_h ethernet;
    wide_h     w0;
    wide_h     w1;
    wide_h     w2;
    wide_h     w3;
    wide_h     w4;
    wide_h     w5;
    wide_h     w6;
    wide_h     w7;
    wide_h     w8;
    wide_h     c0;
    wide_h     c1;
    wide_h     c2;
    wide_h     c3;
    wide_h     c4;
    wide_h     c5;
    wide_h     c6;
    wide_h     c7;
    wide_h     c8;
}

parser IngressParser(packet_in pkt, out wide_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5 : parse_wide;
            default : accept;
        }
    }
    state parse_wide {
        pkt.extract(hdr.w0);
        pkt.extract(hdr.w1);
        pkt.extract(hdr.w2);
        pkt.extract(hdr.w3);
        pkt.extract(hdr.w4);
        pkt.extract(hdr.w5);
        pkt.extract(hdr.w6);
        pkt.extract(hdr.w7);
        pkt.extract(hdr.w8);
        transition accept;
    }
}

control Ingress(inout wide_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action copy() {
        hdr.c0 = hdr.w0;
        hdr.c1 = hdr.w1;
        hdr.c2 = hdr.w2;
        hdr.c3 = hdr.w3;
        hdr.c4 = hdr.w4;
        hdr.c5 = hdr.w5;
        hdr.c6 = hdr.w6;
        hdr.c7 = hdr.w7;
        hdr.c8 = hdr.w8;
    }
    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.w0.isValid()) { copy(); }
    }
}

control IngressDeparser(packet_out pkt, inout wide_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

#include "../tail.p4inc"
