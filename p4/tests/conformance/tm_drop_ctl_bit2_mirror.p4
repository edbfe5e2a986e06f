#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header data_h { bit<8> mode; }
header mirror_h { bit<8> kind; }
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

    apply {
        tm.ucast_egress_port = 1;
        if (hdr.d.mode == 0) { dm.drop_ctl = 2; }
        else if (hdr.d.mode == 1) { dm.drop_ctl = 4; }
        else if (hdr.d.mode == 2) { dm.drop_ctl = 1; }
        else if (hdr.d.mode == 3) { dm.drop_ctl = 4; dm.mirror_type = 1; }
        else if (hdr.d.mode == 4) { dm.drop_ctl = 1; dm.mirror_type = 1; }
        else if (hdr.d.mode == 5) { dm.mirror_type = 1; }
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Mirror() m;
    apply { if (dm.mirror_type == 1) { m.emit<mirror_h>((MirrorId_t)5, {1}); } pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        transition select(pkt.lookahead<bit<8>>()) { 1: mir; default: norm; }
    }
    state mir {
        mirror_h mh;
        pkt.extract(mh);
        transition norm;
    }
    state norm {
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
