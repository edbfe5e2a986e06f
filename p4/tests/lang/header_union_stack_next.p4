/* The cursor of a stack of header unions in a parser (P4_16 §8.18 and §8.21): `extract(u.next.a)`
   extracts member `a` of element `u.nextIndex`, makes that element's other member invalid and
   moves nextIndex on; `u.lastIndex` is nextIndex - 1; on a full stack the parse ends there (no
   error, the rest payload), as for a header stack. The parser takes elements while the next
   byte is 0xAA (an a: tag, x) or 0xBB (a b: tag, y), then stores lastIndex in h.last. When
   h.info is 0x5A on arrival it first makes u[0].b valid (y = 0xEEEE), which the extract of
   u[0].a must make invalid again. Ingress reports u[0].a, u[0].b, u[1].a, u[1].b valid in
   bits 0..3 of h.info. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> info;
    bit<8> last;
}
header a_t {
    bit<8> tag;
    bit<8> x;
}
header b_t {
    bit<8> tag;
    bit<16> y;
}
header_union ab_u {
    a_t a;
    b_t b;
}
struct headers_t {
    h_t h;
    ab_u[2] u;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition select(hdr.h.info) {
            0x5A: preset;
            default: next_elem;
        }
    }
    state preset {
        hdr.u[0].b.setValid();
        hdr.u[0].b.y = 0xEEEE;
        transition next_elem;
    }
    state next_elem {
        transition select(pkt.lookahead<bit<8>>()) {
            0xAA: get_a;
            0xBB: get_b;
            default: done;
        }
    }
    state get_a { pkt.extract(hdr.u.next.a); transition next_elem; }
    state get_b { pkt.extract(hdr.u.next.b); transition next_elem; }
    state done {
        hdr.h.last = (bit<8>) hdr.u.lastIndex;
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        bit<8> v = 0;
        if (hdr.u[0].a.isValid()) { v = v | 1; }
        if (hdr.u[0].b.isValid()) { v = v | 2; }
        if (hdr.u[1].a.isValid()) { v = v | 4; }
        if (hdr.u[1].b.isValid()) { v = v | 8; }
        hdr.h.info = v;
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
