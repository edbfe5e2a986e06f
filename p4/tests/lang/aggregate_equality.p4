/* `==`/`!=` on structs and headers (P4_16 "Operations on structs/headers"; p4c's
   SimplifyComparisons): structs compare field by field (nested structs too); headers are
   equal when both are invalid, or both valid with equal fields. x and y are parsed as the
   low bits of `a` say (bit 0: x, bit 1: y). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
header x_h {
    bit<8> v;
    bit<8> w;
}
struct headers_t {
    h_t h;
    x_h x;
    x_h y;
}
struct meta_t {}
struct pair_t {
    bit<8> lo;
    bit<8> hi;
}
struct outer_t {
    pair_t p;
    bit<8> z;
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition select(hdr.h.a[1:0]) {
            1: px;
            2: py;
            3: pxy;
            default: accept;
        }
    }
    state px { pkt.extract(hdr.x); transition accept; }
    state py { pkt.extract(hdr.y); transition accept; }
    state pxy { pkt.extract(hdr.x); pkt.extract(hdr.y); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        pair_t p = { hdr.h.a, hdr.h.b };
        pair_t q = { hdr.h.b, hdr.h.a };
        outer_t o1 = { p, 7 };
        outer_t o2 = { q, 7 };
        if (p == q) {
            hdr.h.c = 0x01;
        }
        if (o1 != o2) {
            hdr.h.c = 0x10;
        }
        if (hdr.x == hdr.y) {
            hdr.h.d = 1;
        } else {
            hdr.h.d = 2;
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
