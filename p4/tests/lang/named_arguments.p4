/* Named arguments bind by name (P4_16 "Calling convention"; p4c's OrderArguments), whatever
   their order: an action called in control code, in `const entries` and `const
   default_action`, an extern constructor (`Register(initial_value = .., size = ..)`), an extern
   method and a nested control's apply. Bound by position, every pair below would swap. A control `in` parameter's default
   value stands in for an omitted argument. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
}
struct headers_t { h_t h; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Sub(inout bit<8> x, in bit<8> y) {
    apply { x = x - y; }
}

/* `y` has a default value (P4_16 "Parameters with default values"): omitted, it is 1. */
control Dec(inout bit<8> x, in bit<8> y = 1) {
    apply { x = x - y; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<8>, bit<8>>(initial_value = 9, size = 16) r;
    Sub() s;
    Dec() dec;
    action set2(bit<8> p, bit<8> q) {
        hdr.h.b = p;
        hdr.h.c = q;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set2; }
        const entries = { 0x01 : set2(q = 0x22, p = 0x11); }
        const default_action = set2(q = 0x44, p = 0x33);
        size = 16;
    }
    apply {
        if (hdr.h.a == 7) {
            set2(q = 0x66, p = 0x55);
        } else {
            t.apply();
        }
        s.apply(y = 2, x = hdr.h.d);
        hdr.h.e = r.read(index = 3);
        dec.apply(hdr.h.e);
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
