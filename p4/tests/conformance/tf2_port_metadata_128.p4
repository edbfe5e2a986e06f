// Tofino 2's port metadata is the 128-bit phase-0 word (bf-p4c parde/parde_spec.h
// JBayPardeSpec::bytePhase0Size() = 16): a 128-bit `port_metadata_unpack` type fits, and the
// tables file's `port_metadata` of a port holds all 16 bytes. The ingress copies the four
// 32-bit words of the port metadata into the packet's header.
#include <core.p4>
#include <t2na.p4>

header h_t { bit<32> w0; bit<32> w1; bit<32> w2; bit<32> w3; }
struct pm_t { bit<32> a; bit<32> b; bit<32> c; bit<32> d; }
struct hdr_t { h_t h; }
struct md_t { pm_t pm; }

parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start {
        pkt.extract(ig);
        md.pm = port_metadata_unpack<pm_t>(pkt);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        hdr.h.w0 = md.pm.a;
        hdr.h.w1 = md.pm.b;
        hdr.h.w2 = md.pm.c;
        hdr.h.w3 = md.pm.d;
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
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
