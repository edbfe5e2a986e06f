/* The PHV holds, at the end of parsing, every header field a parse path extracts that the
   MAU reads or the deparser emits. Here one ingress path extracts eleven 64-byte headers
   (5632 bits, plus Ethernet and the port), more than the 5248 bits of containers a Tofino 1
   gress can use (6144 less the 896 only egress may use): refused, as bf-p4c cannot allocate
   them. The same headers on exclusive branches fit (ok/phv_exclusive_paths.p4). Tofino 2
   accepts it: headers the MAU does not read may ride in CLOTs instead. */
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
        pkt.extract(hdr.w9);
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
