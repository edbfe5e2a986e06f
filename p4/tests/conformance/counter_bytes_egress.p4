/* Egress byte counters count the packet as the traffic manager stored it: what the ingress
   deparser sent (bridged header included) or, for a mirror copy, the copy with its mirror
   header, plus the 4-byte FCS. Index 0 counts normal packets, index 1 mirror copies. */
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header bridge_h { bit<8> kind; bit<8> pad; }
header mir_h { bit<8> kind; bit<8> tag; }
struct hdr_t { bridge_h b; ethernet_h eth; }
struct md_t { mir_h m; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.eth); transition accept; }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        hdr.b.setValid();
        hdr.b.kind = 0xB0;
        hdr.b.pad = 0;
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        transition select(pkt.lookahead<bit<8>>()) { 0xE2: mir; default: bridged; }
    }
    state mir { pkt.extract(md.m); transition body; }
    state bridged { pkt.extract(hdr.b); transition body; }
    state body { pkt.extract(hdr.eth); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {
    Counter<bit<32>, bit<8>>(4, CounterType_t.PACKETS_AND_BYTES) ce;
    apply {
        if (md.m.isValid()) {
            ce.count(1);
        } else {
            ce.count(0);
            hdr.b.setInvalid();
            ed.mirror_type = 2;
        }
    }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    Mirror() m;
    apply {
        if (ed.mirror_type == 2) { m.emit<mir_h>((MirrorId_t)6, {0xE2, 0x33}); }
        pkt.emit(hdr);
    }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
