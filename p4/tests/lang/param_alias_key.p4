/* A nested control keys a table on its `in` copy of a header field that its body rewrites first: the lookup uses the value passed in (P4_16 §6.8; audit 10b #1). */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> k; bit<8> r0; }
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
control C(in bit<8> key, inout headers_t hh) {
    action hit(bit<8> v) { hh.h.r0 = v; }
    table t { key = { key : exact; } actions = { hit; NoAction; } const entries = { 1 : hit(0x11); 9 : hit(0x99); } default_action = NoAction(); }
    apply {
        hh.h.k = 9;        // rewrite the field the caller passed as `in key`
        t.apply();         // key is the copied-in value (1) -> hit(0x11)
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    C() c;
    apply {
        ig_tm_md.ucast_egress_port = 1;
        c.apply(hdr.h.k, hdr);
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
