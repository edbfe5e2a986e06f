/* A stack of header unions (P4_16 §8.21) indexed with constants: each element keeps the
   union invariant (at most one member valid), and emitting the stack emits each element's
   valid member in order. The parser extracts u[0] as a (1 byte) or b (2 bytes) by bit 0 of
   `sel`, and u[1] likewise by bit 1; ingress then, when bit 2 of `sel` is set, makes
   u[1].a valid with x = 0xEE (dropping a u[1].b). `info` reports u[0].isValid() (bit 0),
   u[0].b.isValid() (bit 1), u[1].isValid() (bit 2), u[1].b.isValid() (bit 3). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> sel;
    bit<8> info;
}
header a_t {
    bit<8> x;
}
header b_t {
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
        transition select(hdr.h.sel[0:0]) {
            0: first_a;
            1: first_b;
        }
    }
    state first_a { pkt.extract(hdr.u[0].a); transition second; }
    state first_b { pkt.extract(hdr.u[0].b); transition second; }
    state second {
        transition select(hdr.h.sel[1:1]) {
            0: second_a;
            1: second_b;
        }
    }
    state second_a { pkt.extract(hdr.u[1].a); transition accept; }
    state second_b { pkt.extract(hdr.u[1].b); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.h.sel[2:2] == 1) {
            hdr.u[1].a.setValid();
            hdr.u[1].a.x = 0xEE;
        }
        bit<8> info = 0;
        if (hdr.u[0].isValid()) {
            info = info | 1;
        }
        if (hdr.u[0].b.isValid()) {
            info = info | 2;
        }
        if (hdr.u[1].isValid()) {
            info = info | 4;
        }
        if (hdr.u[1].b.isValid()) {
            info = info | 8;
        }
        hdr.h.info = info;
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
