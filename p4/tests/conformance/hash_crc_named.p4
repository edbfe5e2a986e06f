#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header data_h { bit<72> inp; bit<16> c16; bit<32> c32; bit<8> c8; bit<32> c16x; bit<16> ccitt; }

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
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) h32;
    Hash<bit<8>>(HashAlgorithm_t.CRC8) h8;
    Hash<bit<32>>(HashAlgorithm_t.CRC16) h16x;
    CRCPolynomial<bit<16>>(16w0x1021, false, false, false, 16w0xFFFF, 16w0) poly;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly) hc;
    apply {
        tm.ucast_egress_port = 1;
        hdr.d.c16 = h16.get({hdr.d.inp});
        hdr.d.c32 = h32.get({hdr.d.inp});
        hdr.d.c8 = h8.get({hdr.d.inp});
        hdr.d.c16x = h16x.get({hdr.d.inp});
        hdr.d.ccitt = hc.get({hdr.d.inp});
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
