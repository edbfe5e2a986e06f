#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header data_h { bit<72> inp; bit<4> a; bit<8> b; bit<4> p0; bit<32> x; bit<8> y; bit<64> c32w; bit<16> c8w; bit<64> c64; bit<32> c32s; bit<8> x8; bit<32> x32; bit<32> idw; }

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
    Hash<bit<64>>(HashAlgorithm_t.CRC32) h1;
    Hash<bit<16>>(HashAlgorithm_t.CRC8) h2;
    Hash<bit<64>>(HashAlgorithm_t.CRC64) h3;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) h4;
    Hash<bit<8>>(HashAlgorithm_t.XOR8) h5;
    Hash<bit<32>>(HashAlgorithm_t.XOR32) h6;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) h7;
    apply {
        tm.ucast_egress_port = 1;
        hdr.d.c32w = h1.get({hdr.d.inp});
        hdr.d.c8w = h2.get({hdr.d.inp});
        hdr.d.c64 = h3.get({hdr.d.inp});
        hdr.d.c32s = h4.get({hdr.d.a, hdr.d.b});
        hdr.d.x8 = h5.get({hdr.d.x, hdr.d.y});
        hdr.d.x32 = h6.get({hdr.d.x, hdr.d.y});
        hdr.d.idw = h7.get({hdr.d.a, hdr.d.b});
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
