/* Digest rules bf-p4c keeps (parde/extract_deparser.cpp, ExtractDeparser::generateDigest;
 * phv/parde_phv_constraints.cpp): two `pack`s under entry 1, the second dropped with a warning
 * (bf-p4c keeps the first field list of each digest index); entry 2 with a zero constant (allowed)
 * and a learn quantum of exactly 48 bytes (1 selector byte + 47). */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> a; bit<8> b; bit<16> f; bit<32> x; }
struct headers_t { h_t h; }
struct dg_t { bit<16> f; bit<8> a; }
struct big_t { bit<64> a; bit<32> b; bit<8> c; bit<8> f0; bit<8> f1; bit<8> f2; bit<8> f3; bit<8> f4; bit<8> f5; bit<8> f6; bit<8> f7; bit<8> f8; bit<8> f9; bit<8> f10; bit<8> f11; bit<8> f12; bit<8> f13; bit<8> f14; bit<8> f15; bit<8> f16; bit<8> f17; bit<8> f18; bit<8> f19; bit<8> f20; bit<8> f21; bit<8> f22; bit<8> f23; bit<8> f24; bit<8> f25; bit<8> f26; bit<8> f27; bit<8> f28; bit<8> f29; bit<8> f30; bit<8> f31; bit<8> f32; bit<8> f33; }
struct meta_t { bit<8> m; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t md,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        ig_dprsr_md.digest_type = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t md,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Digest<dg_t>() d1;
    Digest<dg_t>() d2;
    Digest<big_t>() d3;
    apply {
        if (d.digest_type == 1) {
            d1.pack({hdr.h.f, hdr.h.a});
            d2.pack({hdr.h.f, hdr.h.b});
        }
        if (d.digest_type == 2) {
            d3.pack({hdr.h.x ++ hdr.h.x, 32w0, hdr.h.b, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a, hdr.h.a});
        }
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); pkt.extract(hdr.h); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t md,
           in egress_intrinsic_metadata_for_deparser_t d) {

    apply {

        pkt.emit(hdr);
    }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
