/* A struct-valued expression with its type given by a cast, `(T){ f = .., g = .. }` and
   `(T){ .., .. }` (P4_16 "Structure-valued expressions"): named fields in any order; and
   `{ f = .., ... }`, the fields not named taking their default values (0, nested too). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
struct headers_t { h_t h; }
struct meta_t {}
struct pair_t {
    bit<8> lo;
    bit<8> hi;
}
struct triple_t {
    pair_t p;
    bit<8> z;
    bool f;
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
    apply {
        pair_t p = (pair_t){ hi = hdr.h.a, lo = 2 };
        pair_t q;
        q = (pair_t){ hdr.h.b, 9 };
        hdr.h.a = q.hi;
        hdr.h.b = q.lo;
        hdr.h.c = p.lo;
        hdr.h.d = p.hi;
        triple_t t = { z = hdr.h.a, ... };
        if (!t.f && t.p.lo == 0 && t.p.hi == 0) {
            hdr.h.b = t.z;
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
