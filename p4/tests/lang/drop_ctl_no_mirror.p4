/* `drop_ctl` bit 2 disables mirroring (TNA: "bit 2: disable mirroring"), in ingress and in
   egress, and leaves the packet alone. Byte `mode`: 1 mirrors in ingress (session 5, to port 2)
   with drop_ctl 4; 2 the same mirror without drop_ctl; 5 the mirror with drop_ctl 5 (drop and
   no mirror); 3 mirrors in egress (session 6, to port 3) with drop_ctl 4; 4 the same egress
   mirror without drop_ctl. Every packet goes to port 1. A mirror copy carries a 1-byte mirror
   header (0xE1 ingress, 0xE2 egress) that the egress parser takes off. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> mode;
    bit<8> b;
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
        if (hdr.h.mode == 1) {
            ig_dprsr_md.mirror_type = 1;
            ig_dprsr_md.drop_ctl = 4;
        } else if (hdr.h.mode == 2) {
            ig_dprsr_md.mirror_type = 1;
        } else if (hdr.h.mode == 5) {
            ig_dprsr_md.mirror_type = 1;
            ig_dprsr_md.drop_ctl = 5;
        }
    }
}
control IDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit<mir_h>((MirrorId_t)5, {0xE1});
        }
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
        if (!m.mir.isValid()) {
            if (hdr.h.mode == 3) {
                eg_dprsr_md.mirror_type = 1;
                eg_dprsr_md.drop_ctl = 4;
            } else if (hdr.h.mode == 4) {
                eg_dprsr_md.mirror_type = 1;
            }
        }
    }
}
control EDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == 1) {
            mirror.emit<mir_h>((MirrorId_t)6, {0xE2});
        }
        pkt.emit(hdr);
    }
}
Pipeline(IP(), Ing(), IDep(), EP(), Eg(), EDep()) pipe;
Switch(pipe) main;
