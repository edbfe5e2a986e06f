/* `@pa_alias` of a narrower intrinsic with a wider metadata field: bf-p4c makes the 3-bit
   `mirror_type` the low bits of the 8-bit `m.mtype` (the Intel SDE's switch program mirrors
   this way, never assigning `mirror_type` itself). Writing m.mtype = 0x09 (low bits 1) mirrors
   by session 5; 0x08 (low bits 0) does not. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}
header bridge_h {
    bit<8> tag;
}
header mirror_h {
    bit<8>   tag;
    bit<7>   pad;
    PortId_t port;
}
struct headers_t {
    bridge_h bridge;
    mirror_h mirror;
    h_t      h;
}
struct meta_t {
    bit<8>     mtype;
    MirrorId_t session;
    PortId_t   port;
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        m.port = ig_intr_md.ingress_port;
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

@pa_alias("ingress", "ig_dprsr_md.mirror_type", "m.mtype")
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.bridge.setValid();
        hdr.bridge.tag = 0;
        if (hdr.h.a == 1) {
            m.mtype = 0x09;
            m.session = 5;
        } else if (hdr.h.a == 2) {
            m.mtype = 0x08;
            m.session = 5;
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control CopyOut(in meta_t m, in ingress_intrinsic_metadata_for_deparser_t d) {
    Mirror() mirror;
    apply {
        if (d.mirror_type == 1) {
            mirror.emit<mirror_h>(m.session, {0x77, 0, m.port});
        }
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    CopyOut() copy;
    apply {
        copy.apply(m, d);
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        transition select(pkt.lookahead<bit<8>>()) {
            0x77 : parse_mirror;
            default : parse_bridge;
        }
    }
    state parse_mirror {
        pkt.extract(hdr.mirror);
        pkt.extract(hdr.h);
        transition accept;
    }
    state parse_bridge {
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) {
    apply {
        if (hdr.mirror.isValid()) {
            hdr.h.b = hdr.mirror.port[7:0];
            hdr.h.c = hdr.mirror.tag;
        }
        hdr.mirror.setInvalid();
        hdr.bridge.setInvalid();
    }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
