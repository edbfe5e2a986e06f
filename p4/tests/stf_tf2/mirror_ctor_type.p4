/* Tofino 2's `Mirror(mirror_type)`: an instance made with a mirror type is the mirror table's
   entry for that type, selected by `ig_intr_md_for_dprsr.mirror_type` (bf-p4c
   `ExtractDeparser::processMirrorEmit`), so its `emit` needs no `if` and copies the packet only
   when mirror_type holds its type. Byte `mode` is the mirror type ingress writes (0: none);
   type 1 mirrors to session 5 with header 0xE1, type 2 to session 6 with 0xE2. */
#include <core.p4>
#include <t2na.p4>

header h_t {
    bit<8> mode;
    bit<8> v;
}
header mir_h {
    bit<8> kind;
}
struct headers_t { h_t h; }
struct meta_t { mir_h mir; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.h.mode != 0) {
            ig_dprsr_md.mirror_type = (bit<4>) hdr.h.mode;
        }
    }
}
control IDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror(1) one;
    Mirror(2) two;
    apply {
        one.emit<mir_h>((MirrorId_t)5, {0xE1});
        two.emit<mir_h>((MirrorId_t)6, {0xE2});
        pkt.emit(hdr);
    }
}
parser EP(packet_in pkt, out headers_t hdr, out meta_t m,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            0xE1: mirrored;
            0xE2: mirrored;
            default: body;
        }
    }
    state mirrored {
        pkt.extract(m.mir);
        transition body;
    }
    state body {
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (m.mir.isValid()) {
            hdr.h.v = m.mir.kind;
        }
    }
}
control EDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), IDep(), EP(), Eg(), EDep()) pipe;
Switch(pipe) main;
