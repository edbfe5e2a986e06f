/* Sub-parsers take their arguments by copy-in/copy-out (P4_16 §6.8), as controls and actions do: `Sub` writes `hdr.a.f0` through its `inout` parameter `w` and then reads its `in` parameter `k`, whose argument is that same field, so `k` keeps the value it was called with (copied into a temporary; the `select` on `k` too); `out` arguments (a header and a field) take what the sub-parser computed. The one instance `sub` is applied twice with other arguments (issue 11, lang 1). */
#include <core.p4>
#include <tna.p4>
header a_t { bit<8> f0; bit<8> f1; bit<8> f2; bit<8> f3; }
header b_t { bit<8> x; bit<8> y; }
struct headers_t { a_t a; b_t b1; b_t b2; }
struct meta_t {}
parser Sub(packet_in pkt, out b_t b, inout bit<8> w, in bit<8> k, out bit<8> o) {
    state start {
        pkt.extract(b);
        w = 0x99;
        o = k;
        transition select(k) {
            0x11: hit;
            default: accept;
        }
    }
    state hit {
        b.y = k;
        transition accept;
    }
}
parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    Sub() sub;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.a);
        sub.apply(pkt, hdr.b1, hdr.a.f0, hdr.a.f0, hdr.a.f1);  // k = 0x11 (not 0x99): b1.y = 0x11
        sub.apply(pkt, hdr.b2, hdr.a.f3, hdr.b1.x, hdr.a.f2);  // k = 0x22: a.f2 = 0x22
        transition accept;
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
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
