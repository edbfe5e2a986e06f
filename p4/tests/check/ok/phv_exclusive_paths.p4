/* The headers of rejected/phv_one_path.p4, each on its own branch of a select: no packet
   holds two of them, so they may share containers, and the program fits (the PHV bound is
   that of the fullest single path: one 64-byte header, Ethernet and the port). */
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
    wide_h     w9;
    wide_h     w10;
}

parser IngressParser(packet_in pkt, out wide_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x8800 : parse_w0;
            0x8801 : parse_w1;
            0x8802 : parse_w2;
            0x8803 : parse_w3;
            0x8804 : parse_w4;
            0x8805 : parse_w5;
            0x8806 : parse_w6;
            0x8807 : parse_w7;
            0x8808 : parse_w8;
            0x8809 : parse_w9;
            0x880a : parse_w10;
            default : accept;
        }
    }
    state parse_w0 {
        pkt.extract(hdr.w0);
        transition accept;
    }
    state parse_w1 {
        pkt.extract(hdr.w1);
        transition accept;
    }
    state parse_w2 {
        pkt.extract(hdr.w2);
        transition accept;
    }
    state parse_w3 {
        pkt.extract(hdr.w3);
        transition accept;
    }
    state parse_w4 {
        pkt.extract(hdr.w4);
        transition accept;
    }
    state parse_w5 {
        pkt.extract(hdr.w5);
        transition accept;
    }
    state parse_w6 {
        pkt.extract(hdr.w6);
        transition accept;
    }
    state parse_w7 {
        pkt.extract(hdr.w7);
        transition accept;
    }
    state parse_w8 {
        pkt.extract(hdr.w8);
        transition accept;
    }
    state parse_w9 {
        pkt.extract(hdr.w9);
        transition accept;
    }
    state parse_w10 {
        pkt.extract(hdr.w10);
        transition accept;
    }
}

control Ingress(inout wide_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port; }
}

control IngressDeparser(packet_out pkt, inout wide_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

#include "../tail.p4inc"
