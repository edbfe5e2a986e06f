/* Generic structs and headers (P4_16 §7.2.11; p4c's SpecializeGenericTypes): `pair_t<T>`
   specialised as `pair_t<bit<8>>` and `pair_t<bit<16>>` (two distinct types), nested through
   a type parameter in `wrap_t<T>`, and a generic header `tag_t<bit<16>>` extracted after h.
   Ingress swaps a and b through pair_t<bit<8>> values, swaps c and d through a
   pair_t<bit<16>> metadata field, sets flags 1 when a == b (p == q), else 2, and adds 1 to
   the tag. */
#include <core.p4>
#include <tna.p4>

struct pair_t<T> {
    T lo;
    T hi;
}
struct wrap_t<T> {
    pair_t<T> p;
    T extra;
}
header h_t {
    bit<8> a;
    bit<8> b;
    bit<16> c;
    bit<16> d;
    bit<8> flags;
}
header tag_t<T> {
    T v;
}
struct headers_t { h_t h; tag_t<bit<16>> t; }
struct meta_t {
    pair_t<bit<16>> w;
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.t);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        pair_t<bit<8>> p = { hdr.h.a, hdr.h.b };
        pair_t<bit<8>> q = { lo = hdr.h.b, hi = hdr.h.a };
        wrap_t<bit<8>> r = { p, 7 };
        m.w = { hdr.h.c, hdr.h.d };
        hdr.h.c = m.w.hi;
        hdr.h.d = m.w.lo;
        if (p == q) {
            hdr.h.flags = 1;
        } else {
            hdr.h.flags = 2;
        }
        hdr.h.a = r.p.hi;
        hdr.h.b = q.hi;
        hdr.t.v = hdr.t.v + 1;
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
