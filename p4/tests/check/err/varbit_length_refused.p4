/* Varbit lengths bf-p4c refuses (midend/desugar_varbit_extract.cpp): it enumerates every value
   of the length's one variable, and a length within the field that is not whole bytes is fatal
   (check_compile_time_constant), as is a variable of more than 10 bits (more than 1024 parser
   branches) and a constant length that is not whole bytes or is past the field. hdr.h.a * 4 is
   4 bits for a = 1; hdr.h.f has 16 bits. */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<16> f; bit<16> g; bit<32> x; }
header v_t { varbit<32> opt; }
header u_t { varbit<32> opt; }
header w_t { bit<16> w; }

struct hdr_t { h_t h; v_t v; w_t w; u_t u1; u_t u2; u_t u3; }
struct md_t { bit<8> m; bit<16> m16; bit<32> m32; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {

    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition parse_v;
    }
    state parse_v {
        pkt.extract(hdr.v, (bit<32>)hdr.h.a * 4);
        transition parse_u1;
    }
    state parse_u1 {
        pkt.extract(hdr.u1, (bit<32>)hdr.h.f * 8);
        transition parse_u2;
    }
    state parse_u2 {
        pkt.extract(hdr.u2, 12);
        transition parse_u3;
    }
    state parse_u3 {
        pkt.extract(hdr.u3, 40);
        transition parse_w;
    }
    state parse_w {
        pkt.extract(hdr.w);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {

    apply {
        tm.ucast_egress_port = 1;
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {

    apply {

    }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply {  }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
