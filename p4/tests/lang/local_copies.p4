/* Local copy propagation (p4c's LocalCopyPropagation): a control local that copies a field is
   read as the field where the copy reaches unchanged, and its copy disappears (the golden IR
   has no statement for `t`). Where the copy does not reach unchanged, the local keeps its
   value in its own storage, so the outputs are those of the program as written:
   - `t` copies h.a, read once: b := a (propagated, copy gone);
   - `s` copies h.c, then h.c is incremented: d := the old c (kept);
   - `r` copies h.a and is rewritten on one branch: e := 0x77 when a is 0x10, else a (kept);
   - `q` copies h.f, then bump's default action increments h.f: g := the old f (kept);
   - `u` copies h.a and is read inside an action: h := a (kept). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
    bit<8> g;
    bit<8> h;
}
struct headers_t { h_t h; }
struct meta_t { }

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
    bit<8> u;
    action bump() { hdr.h.f = hdr.h.f + 1; }
    action use_u() { hdr.h.h = u; }
    table bumper {
        key = { hdr.h.a : exact; }
        actions = { bump; }
        const default_action = bump();
        size = 16;
    }
    apply {
        bit<8> t = hdr.h.a;
        bit<8> s = hdr.h.c;
        bit<8> r = hdr.h.a;
        bit<8> q = hdr.h.f;
        u = hdr.h.a;
        hdr.h.b = t;
        hdr.h.c = hdr.h.c + 1;
        hdr.h.d = s;
        if (hdr.h.a == 0x10) {
            r = 0x77;
        }
        hdr.h.e = r;
        bumper.apply();
        hdr.h.g = q;
        use_u();
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
