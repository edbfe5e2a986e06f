#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<16> f; bit<16> g; bit<32> x; }

struct hdr_t { h_t h; }
struct md_t { bit<8> m; bit<16> m16; bit<32> m32; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    Checksum() ck;
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        ck.subtract({hdr.h.g});
        ck.subtract({hdr.h.x});
        ck.subtract_all_and_deposit(md.m16);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {

    apply {
        tm.ucast_egress_port = 1;
        hdr.h.x = 32w0x0a0b0c0d;
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Checksum() ck2;
    apply {
        hdr.h.g = ck2.update({hdr.h.x, md.m16});
        pkt.emit(hdr);
    }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {

    apply {

    }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply {  }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
