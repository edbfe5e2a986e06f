/* `out` parameters of functions (P4_16 "Calling convention: call by copy in/copy out"): an
   `out` header starts invalid, so a function that does not make it valid leaves its argument
   invalid (`clear`, and `fill` when sel != 1); `x = f(x, x)` with an `out` x copies out first and
   assigns the result after (`first`). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> k;
    bit<8> r0;
    bit<8> r2;
    bit<8> r3;
}
header x_t {
    bit<8> v;
    bit<8> w;
}
struct headers_t {
    h_t h;
    x_t y;
    x_t z;
}
struct meta_t {}

void clear(out x_t hx) { }
void fill(out x_t hx, in bit<8> sel) {
    if (sel == 1) {
        hx.setValid();
        hx.v = 0x77;
        hx.w = 0x66;
    }
}
bit<8> first(in bit<8> a, out bit<8> b) {
    b = a + 1;
    return a;
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.y);
        pkt.extract(hdr.z);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        clear(hdr.y);
        fill(hdr.z, hdr.h.k);
        hdr.h.r2 = first(hdr.h.r2, hdr.h.r2);
        hdr.h.r3 = first(hdr.h.r0, hdr.h.r3);
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
