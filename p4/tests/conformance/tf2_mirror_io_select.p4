/* Tofino 2 (--target tofino2): ingress mirror with mirror_io_select = 1 mirrors the outgoing
   (ingress-deparsed) packet, not the one received (t2na: "Mirror incoming or outgoing packet";
   SDE/switch.p4 programs set it to 1 for exactly that). Ingress writes v = 0x55 and mirrors to
   session 6 (port 3); the copy must carry v = 0x55. */
#include <core.p4>
#include <t2na.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header d_h { bit<8> v; }
header mir_h { bit<8> kind; }
struct hdr_t { ethernet_h eth; d_h d; }
struct md_t { mir_h m; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.eth); pkt.extract(hdr.d); transition accept; }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        hdr.d.v = 0x55;
        dm.mirror_type = 1;
        dm.mirror_io_select = 1;
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Mirror() m;
    apply {
        if (dm.mirror_type == 1) { m.emit<mir_h>((MirrorId_t)6, {0xE1}); }
        pkt.emit(hdr);
    }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        transition select(pkt.lookahead<bit<8>>()) { 0xE1: mir; default: body; }
    }
    state mir { pkt.extract(md.m); transition body; }
    state body { pkt.extract(hdr.eth); pkt.extract(hdr.d); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) { apply { pkt.emit(hdr); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
