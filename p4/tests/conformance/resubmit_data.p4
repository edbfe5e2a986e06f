/* Resubmit with data: pass 1 resubmits with {k=0x5a, v=0x0102030405060} ... pass 2 copies the
   resubmit data (which takes the port metadata's 8 bytes) into the packet and forwards. */
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header rs_h { bit<8> k; bit<56> v; }
header d_h { bit<8> k; bit<56> v; bit<8> flag; }
struct hdr_t { ethernet_h eth; d_h d; }
struct md_t { rs_h rs; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start {
        pkt.extract(ig);
        transition select(ig.resubmit_flag) { 1: resub; default: port; }
    }
    state resub { pkt.extract(md.rs); transition body; }
    state port { pkt.advance(PORT_METADATA_SIZE); transition body; }
    state body { pkt.extract(hdr.eth); pkt.extract(hdr.d); transition accept; }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        if (ig.resubmit_flag == 0) {
            dm.resubmit_type = 1;
            md.rs.setValid();
            md.rs.k = 0x5a;
            md.rs.v = 56w0x01020304050607;
        } else {
            hdr.d.k = md.rs.k;
            hdr.d.v = md.rs.v;
            hdr.d.flag = 1;
        }
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Resubmit() r;
    apply {
        if (dm.resubmit_type == 1) { r.emit(md.rs); }
        pkt.emit(hdr);
    }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) { apply { pkt.emit(hdr); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
