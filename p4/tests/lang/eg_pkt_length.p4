/* `eg_intr_md.pkt_length` is, as on Tofino, the length the packet had when it entered
   ingress, FCS included, whatever ingress added (the 5 bytes of bridged metadata here are not
   counted); a mirror copy's also counts its mirror header (2 bytes here). Egress writes it into
   the low 16 bits of ethernet.src: a 60-byte frame (64 on the wire) reads 64 on the unicast
   copy (port 1) and 66 on the ingress mirror copy (session 5, port 2). */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header bridge_h {
    bit<8>  kind;
    bit<32> pad;
}
header mirror_h {
    bit<8> kind;
    bit<8> pad;
}
struct hdr_t {
    bridge_h   bridge;
    ethernet_h eth;
}
struct md_t { }

parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        hdr.bridge.setValid();
        hdr.bridge.kind = 0;
        hdr.bridge.pad = 0;
        dm.mirror_type = 1;
    }
}

control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Mirror() m;
    apply {
        if (dm.mirror_type == 1) {
            m.emit<mirror_h>((MirrorId_t)5, {1, 0});
        }
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    mirror_h mh;
    state start {
        pkt.extract(eg);
        transition select(pkt.lookahead<bit<8>>()) {
            1 : mirrored;
            default : bridged;
        }
    }
    state mirrored {
        pkt.extract(mh);
        pkt.extract(hdr.eth);
        transition accept;
    }
    state bridged {
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {
    apply {
        hdr.eth.src[15:0] = eg.pkt_length;
        hdr.bridge.setInvalid();
    }
}

control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { pkt.emit(hdr); }
}

Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
