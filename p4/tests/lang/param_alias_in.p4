/* Copy-in/copy-out (P4_16 §6.8): an action's or nested control's `in` parameter keeps the value it was called with when the body writes the argument under another name, and an `inout` one copies back what it computed (pisa gives such a parameter a temporary; audit 10b #1). */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> r0; bit<8> r1; bit<8> r2; bit<8> r3; bit<8> r4; bit<8> r5; bit<8> r6; bit<8> r7; }
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
control C(in bit<8> v, inout headers_t hh) {
    apply { hh.h.r2 = 1; hh.h.r3 = v; }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    C() c;
    bit<8> gl = 0;
    action a(in bit<8> v) { hdr.h.r0 = 1; hdr.h.r1 = v; }
    action b(inout bit<8> v) { hdr.h.r4 = 1; v = v + 1; }
    apply {
        ig_tm_md.ucast_egress_port = 1;
        a(hdr.h.r0);          // r0=1, r1=5 (copy-in)
        c.apply(hdr.h.r2, hdr);  // r2=1 r3=5
        b(hdr.h.r4);          // r4: v copy-in 5, r4=1 then copy-out v=6 -> r4=6
    }
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
