/* Top-level functions, inlined as p4c's frontend does (copy-in/copy-out): a nested call and a
   call inside an expression, an `out` parameter with an early return, a generic function
   (type argument given, and inferred from the destination), a struct result, `inout`
   parameters that alias one another (copied in and out), a function called in an action. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
}
struct headers_t { h_t h; }
struct meta_t {}
struct pair_t {
    bit<8> lo;
    bit<8> hi;
}

bit<8> inc(in bit<8> x) { return x + 1; }
bit<8> twice(in bit<8> x) { return inc(inc(x)); }
void clamp(in bit<8> v, out bit<8> r) {
    if (v > 100) {
        r = 100;
        return;
    }
    r = v;
}
T pick<T>(in bool c, in T x, in T y) {
    if (c) {
        return x;
    }
    return y;
}
pair_t split(in bit<8> v) { return { lo = v & 0x0f, hi = v >> 4 }; }
void swap(inout bit<8> a, inout bit<8> b) {
    bit<8> t = a;
    a = b;
    b = t;
}
void bump(inout bit<8> x, in bit<8> y) {
    x = x + 1;
    x = x + y;
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
    action act(bit<8> k) { hdr.h.f = inc(k); }
    table t {
        key = { hdr.h.a : exact; }
        actions = { act; }
        const default_action = act(0x40);
        size = 16;
    }
    apply {
        hdr.h.b = twice(hdr.h.b);
        clamp(hdr.h.c, hdr.h.c);
        pair_t p = split(hdr.h.a);
        hdr.h.e = pick(hdr.h.a == 0x12, p.hi, p.lo);
        bump(hdr.h.d, hdr.h.d);
        t.apply();
        swap(hdr.h.e, hdr.h.f);
        if (pick<bit<8>>(hdr.h.a == 0x12, 1, 2) == 1) {
            hdr.h.a = 0xab;
        }
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
