/* Actions listed with their directional parameters bound (P4_16 §14.2.1.2): `put(m.x)` in
   one table and `put(m.y)` in another are two actions; the control plane supplies only the
   directionless `v`, and a default action or entry writes the bound arguments too. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
struct headers_t { h_t h; }
struct meta_t {
    bit<8> x;
    bit<8> y;
}

action put(inout bit<8> dst, bit<8> v) {
    dst = v;
}

action mark(inout headers_t hdr) {
    hdr.h.c = 0xee;
}

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
    table first {
        key = { hdr.h.a : exact; }
        actions = { put(m.x); mark(hdr); }
        const default_action = put(m.x, 0x11);
        size = 16;
    }
    table second {
        key = { hdr.h.a : exact; }
        actions = { put(m.y); }
        entries = { 0x05 : put(m.y, 0x55); }
        default_action = put(m.y, 0x22);
        size = 16;
    }
    apply {
        first.apply();
        second.apply();
        hdr.h.b = m.x;
        hdr.h.d = m.y;
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
