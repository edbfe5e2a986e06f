#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<16> f; bit<16> g; bit<32> x; }

struct hdr_t { h_t h; }
struct md_t { bit<8> m; bit<16> m16; bit<32> m32; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {

    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    Wred<bit<32>, bit<1>>(1, 0xdd, 0x11) w;
    apply {
        tm.ucast_egress_port = 1;
        hdr.h.b = w.execute(hdr.h.x, 0);
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    apply { pkt.emit(hdr); }
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
