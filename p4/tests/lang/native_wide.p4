/* What the native code generator takes beyond the common shapes (each was left to the flat
   engine before): 128-bit fields lying across three 8-byte PHV words (read, written, sliced,
   compared), a table with more than 16 key fields, header copies, and parser lookaheads of
   wide and narrow fields at bit offsets that are not byte aligned. */
#include <core.p4>
#include <tna.p4>

header w_t {
    bit<8>   tag;
    bit<128> a;
    bit<24>  pad;
    bit<128> b;
}
header k_t {
    bit<8> k0; bit<8> k1; bit<8> k2; bit<8> k3; bit<8> k4; bit<8> k5; bit<8> k6;
    bit<8> k7; bit<8> k8; bit<8> k9; bit<8> k10; bit<8> k11; bit<8> k12; bit<8> k13;
    bit<8> k14; bit<8> k15; bit<8> k16; bit<8> k17; bit<8> k18; bit<8> k19;
}
header c_t {
    bit<8>  v;
    bit<16> u;
}
header lk_t {
    bit<3>   skip;
    bit<100> wide;
    bit<5>   skip2;
    bit<40>  narrow;
}
struct headers_t { w_t w; k_t k; c_t c0; c_t c1; }
struct meta_t { bit<8> lk; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        m.lk = 0;
        transition select(pkt.lookahead<lk_t>().wide[99:92], pkt.lookahead<lk_t>().narrow[7:0]) {
            (0x2a, _): wide_hit;
            (_, 0x5c): narrow_hit;
            default: parse_w;
        }
    }
    state wide_hit { m.lk = 1; transition parse_w; }
    state narrow_hit { m.lk = 2; transition parse_w; }
    state parse_w {
        pkt.extract(hdr.w);
        pkt.extract(hdr.k);
        pkt.extract(hdr.c0);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_port(PortId_t p, bit<128> x) {
        ig_tm_md.ucast_egress_port = p;
        hdr.w.b = x;
    }
    table wide_keys {
        key = {
            hdr.k.k0 : exact; hdr.k.k1 : exact; hdr.k.k2 : exact; hdr.k.k3 : exact;
            hdr.k.k4 : exact; hdr.k.k5 : exact; hdr.k.k6 : exact; hdr.k.k7 : exact;
            hdr.k.k8 : exact; hdr.k.k9 : exact; hdr.k.k10 : exact; hdr.k.k11 : exact;
            hdr.k.k12 : exact; hdr.k.k13 : exact; hdr.k.k14 : exact; hdr.k.k15 : exact;
            hdr.k.k16 : exact; hdr.k.k17 : exact; hdr.k.k18 : exact; hdr.k.k19 : exact;
        }
        actions = { set_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        ig_tm_md.ucast_egress_port = 2;
        hdr.w.tag = m.lk;
        if (hdr.w.a == hdr.w.b) {
            hdr.w.tag = hdr.w.tag | 0x80;
        }
        hdr.w.a = hdr.w.a + 1;
        hdr.w.b[71:8] = hdr.w.a[127:64] ^ hdr.w.b[63:0];
        wide_keys.apply();
        hdr.c1 = hdr.c0;
        hdr.c1.u = hdr.c1.u + 1;
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
