/* Header unions (P4_16 §7.2.4, §8.20): at most one member is valid. Extracting a member,
   `setValid()` on it or assigning a header to it makes the other members invalid;
   `setInvalid()` on any member leaves the whole union invalid; `u.isValid()` is true when a
   member is; emitting the union emits the valid member. `sel` says what the parser extracts
   (1, 5, 6: a; 2, 7: b; 3: a then b; 8: a, then b assigned from a lookahead; 9: a, then the
   varbit member c with 16 bits) and what ingress does (4: a.setValid(); 5: b.setValid();
   6: b = a local valid header; 7: a.setInvalid()). `info` reports the validity seen at the
   end of ingress: bit 0 u.isValid(), bit 1 u.a.isValid(), bit 2 u.b.isValid(). */
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
header c_t {
    varbit<16> opt;
}
header_union ab_u {
    a_t a;
    b_t b;
    c_t c;
}
struct headers_t {
    h_t h;
    ab_u u;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition select(hdr.h.sel) {
            1: pa;
            5: pa;
            6: pa;
            2: pb;
            7: pb;
            3: pab;
            8: pla;
            9: pac;
            default: accept;
        }
    }
    state pa { pkt.extract(hdr.u.a); transition accept; }
    state pb { pkt.extract(hdr.u.b); transition accept; }
    state pab { pkt.extract(hdr.u.a); pkt.extract(hdr.u.b); transition accept; }
    state pac { pkt.extract(hdr.u.a); pkt.extract(hdr.u.c, 16); transition accept; }
    state pla { pkt.extract(hdr.u.a); hdr.u.b = pkt.lookahead<b_t>(); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        b_t nb;
        nb.setValid();
        nb.y = 0x1234;
        if (hdr.h.sel == 4) {
            hdr.u.a.setValid();
            hdr.u.a.x = 0xEE;
        } else if (hdr.h.sel == 5) {
            hdr.u.b.setValid();
            hdr.u.b.y = 0xBBBB;
        } else if (hdr.h.sel == 6) {
            hdr.u.b = nb;
        } else if (hdr.h.sel == 7) {
            hdr.u.a.setInvalid();
        }
        bit<8> info = 0;
        if (hdr.u.isValid()) {
            info = info | 1;
        }
        if (hdr.u.a.isValid()) {
            info = info | 2;
        }
        if (hdr.u.b.isValid()) {
            info = info | 4;
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
