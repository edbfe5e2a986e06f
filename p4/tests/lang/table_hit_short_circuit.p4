/* `t.apply().hit` / `.miss` under `!`, `&&`, `||` and `?:` with a function call (which has side
   effects) on the other side (P4_16 "Expression evaluation order"; p4c's SideEffectOrdering): the
   table is applied first, then its result is tested, and the call runs only when short-circuit
   evaluation reaches it. A negated result stored in a `bool` and a `?:` selecting on a result (no call) too (issue 11, lang 2). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> k;
    bit<8> r0;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
    bit<8> r9;
    bit<8> r10;
}
struct headers_t { h_t h; }
struct meta_t {}

bool setb(inout bit<8> x, in bit<8> v, in bool ret) {
    x = v;
    return ret;
}
bit<8> inc(inout bit<8> x) {
    x = x + 1;
    return x;
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
    action set_r0(bit<8> v) { hdr.h.r0 = v; }
    action set_r5(bit<8> v) { hdr.h.r5 = v; }
    action set_r7(bit<8> v) { hdr.h.r7 = v; }
    table t1 {
        key = { hdr.h.k : exact; }
        actions = { set_r0; NoAction; }
        const entries = { 1 : set_r0(0x11); }
        default_action = NoAction();
    }
    table t2 {
        key = { hdr.h.k : exact; }
        actions = { set_r5; NoAction; }
        const entries = { 1 : set_r5(0x55); }
        default_action = NoAction();
    }
    table t3 {
        key = { hdr.h.k : exact; }
        actions = { set_r7; NoAction; }
        const entries = { 2 : set_r7(0x77); }
        default_action = NoAction();
    }
    table t4 {
        key = { hdr.h.k : exact; }
        actions = { NoAction; }
        const entries = { 1 : NoAction(); }
        default_action = NoAction();
    }
    table t5 {
        key = { hdr.h.k : exact; }
        actions = { NoAction; }
        const entries = { 1 : NoAction(); }
        default_action = NoAction();
    }
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (!t1.apply().hit && setb(hdr.h.r1, 0x21, true)) {
            hdr.h.r2 = 0x22;
        }
        if (t2.apply().miss || setb(hdr.h.r3, 0x33, hdr.h.k == 1)) {
            hdr.h.r4 = 0x44;
        }
        bool b = !t3.apply().hit;
        if (b) {
            hdr.h.r6 = 0x66;
        }
        hdr.h.r8 = !t4.apply().hit ? inc(hdr.h.r9) : 8w0x88;
        hdr.h.r10 = t5.apply().miss ? 8w0xA1 : 8w0xA2;
    }
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
control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
