/* Minimum frame size. EtherType 0x88B5 carries a 36-byte app header (a frame must be at least
 * 50 bytes to hold it); 0x88B6 carries a 20-byte tunnel header that ingress removes. Every
 * packet goes to port 2. The ingress deparser's mirror header is too long for Tofino (a
 * warning says pisa cuts it). */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header app_h {
    bit<64> w0;
    bit<64> w1;
    bit<64> w2;
    bit<64> w3;
    bit<32> w4;
}

header tunnel_h {
    bit<64> a;
    bit<64> b;
    bit<32> c;
}

struct headers_t {
    ethernet_h ethernet;
    app_h      app;
    tunnel_h   tunnel;
}
struct metadata_t { }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5 : parse_app;
            0x88b6 : parse_tunnel;
            default : accept;
        }
    }
    state parse_app {
        pkt.extract(hdr.app);
        transition accept;
    }
    state parse_tunnel {
        pkt.extract(hdr.tunnel);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.tunnel.setInvalid();
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        /* Never taken (mirror_type stays 0); a 36-byte mirror header is over Tofino's 32. */
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit(10w1, hdr.app);
        }
        pkt.emit(hdr);
    }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
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
