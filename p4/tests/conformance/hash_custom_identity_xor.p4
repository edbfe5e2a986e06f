#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header data_h { bit<4> a; bit<8> b; bit<4> pad0; bit<32> x; bit<8> y; bit<16> cc12; bit<16> usb; bit<32> ccne; bit<32> cce; bit<16> id16; bit<8> id8; bit<16> xor16; }

struct hdr_t { ethernet_h eth; data_h d; }
struct md_t { }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    CRCPolynomial<bit<16>>(16w0x1021, false, false, false, 16w0xFFFF, 16w0) p1;
    CRCPolynomial<bit<16>>(16w0x8005, true, false, false, 16w0xFFFF, 16w0xFFFF) p2;
    CRCPolynomial<bit<16>>(16w0x1021, false, false, true, 16w0xFFFF, 16w0) p3;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, p1) h1;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, p2) h2;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, p1) h3;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, p3) h4;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) hi16;
    Hash<bit<8>>(HashAlgorithm_t.IDENTITY) hi8;
    Hash<bit<16>>(HashAlgorithm_t.XOR16) hx;
    apply {
        tm.ucast_egress_port = 1;
        hdr.d.cc12 = h1.get({hdr.d.a, hdr.d.b});
        hdr.d.usb = h2.get({hdr.d.a, hdr.d.b});
        hdr.d.ccne = h3.get({hdr.d.a, hdr.d.b});
        hdr.d.cce = h4.get({hdr.d.a, hdr.d.b});
        hdr.d.id16 = hi16.get({hdr.d.a, hdr.d.b});
        hdr.d.id8 = hi8.get({hdr.d.a, hdr.d.b});
        hdr.d.xor16 = hx.get({hdr.d.x, hdr.d.y});
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {

    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {

    apply {  }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
