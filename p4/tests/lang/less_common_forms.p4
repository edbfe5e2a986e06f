/* Valid forms that are less common (P4_16 "Structure-valued expressions", "Header stacks",
   "Integer literal types"): a struct compared with a named initializer on either side (the
   initializer takes the other operand's type); `push_front(n)` with n at least the stack's size
   (every element invalid); an `int<8>` assigned 200 (warned, the low 8 bits used: -56). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> k;
    bit<8> a;
    bit<8> b;
    int<8> sa;
}
header x_t { bit<8> v; }
struct s_t {
    bit<8> p;
    bit<8> q;
}
struct headers_t {
    h_t h;
    x_t[3] st;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.st[0]);
        pkt.extract(hdr.st[1]);
        pkt.extract(hdr.st[2]);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        s_t s = { hdr.h.k, 2 };
        if (s == { p = 1, q = 2 }) {
            hdr.h.a = 0x11;
        } else {
            hdr.h.a = 0x22;
        }
        if ({ p = 1, q = 2 } != s) {
            hdr.h.b = 0x33;
        } else {
            hdr.h.b = 0x44;
        }
        hdr.h.sa = 200;
        if (hdr.h.k == 1) {
            hdr.st.push_front(5);
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
