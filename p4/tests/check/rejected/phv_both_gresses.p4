/* Each PHV container belongs to one gress. Here ingress parses ten 64-byte headers on one
   path, and egress one of them and a 48-byte one (within its 160-byte parse depth), all
   emitted: 5241 and 1008 bits, which each gress alone could hold (5248 at most), but not both
   on a Tofino 1 (6144 bits in all): refused, naming both paths. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header wide_h {
    bit<256> a;
    bit<256> b;
}

header mid_h {
    bit<384> a;
}

struct headers_t {
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
    mid_h      m;
}

struct metadata_t { }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
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
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port; }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5 : parse_wide;
            default : accept;
        }
    }
    state parse_wide {
        pkt.extract(hdr.w0);
        pkt.extract(hdr.m);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
