/* An `if` comparing a concatenation wider than 32 bits: `(hdr.h.f ++ hdr.h.x) == K` (16 + 32
   bits) and `!=` of another one. bf-p4c's CanonGatewayExpr splits an ==/!= wider than 32 bits
   into per-slice comparisons, and MakeSlice slices through `++`, so the gateway compares f and
   x separately; `++` puts its left operand in the high bits (P4_16 8.6). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8>  r;
    bit<8>  s;
    bit<16> f;
    bit<32> x;
}
struct headers_t { h_t h; }
struct meta_t {}

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
        ig_tm_md.ucast_egress_port = 1;
        if ((hdr.h.f ++ hdr.h.x) == 48w0xbeef_01020304) {
            hdr.h.r = 1;
        } else {
            hdr.h.r = 2;
        }
        if ((hdr.h.x ++ hdr.h.f) != 48w0x01020304_beef) {
            hdr.h.s = 3;
        }
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
