/* invalidate(field) / is_validated(field) on Tofino 1 (a PHV container's own valid bit):
   containers start a pass invalid; the parser's extract or an action's write validates one;
   `invalidate` (bf-p4c: the action ALU's `invalidate` instruction) clears it (tofino-model
   instr.cpp, Tofino 1 features: INSTR_INVALIDATE_IS_NOP/ERR false, PHV_INIT_ALL_VALID false).
   The deparser resubmits only when resubmit_type's container is valid (tofino-model
   deparser-ingress.cpp `is_valid_d`), so invalidating it after a write cancels the resubmit.
   Output d: a = is_validated(never-written md.m), b = is_validated(extracted hdr.d.b),
   c = is_validated(md.w) after a write then invalidate, e = after a second write,
   r = 0x11 on the first pass, 0xee on a resubmitted pass (which must not happen). */
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header d_h { bit<8> a; bit<8> b; bit<8> c; bit<8> e; bit<8> r; }
struct hdr_t { ethernet_h eth; d_h d; }
struct md_t { bit<8> m; bit<8> w; }
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
    action wipe() { invalidate(md.w); }
    apply {
        tm.ucast_egress_port = 1;
        if (ig.resubmit_flag == 1) {
            hdr.d.r = 0xee;
        } else {
            hdr.d.r = 0x11;
            dm.resubmit_type = 1;
            invalidate(dm.resubmit_type);
        }
        if (is_validated(md.m)) { hdr.d.a = 1; } else { hdr.d.a = 0; }
        if (is_validated(hdr.d.b)) { hdr.d.b = 1; } else { hdr.d.b = 0; }
        md.w = 5;
        wipe();
        if (is_validated(md.w)) { hdr.d.c = 1; } else { hdr.d.c = 0; }
        md.w = 6;
        if (is_validated(md.w)) { hdr.d.e = 1; } else { hdr.d.e = 0; }
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Resubmit() r;
    apply {
        if (dm.resubmit_type == 1) { r.emit(); }
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
