/* Directional arguments bound in a table's action list (`a(hdr.h.r0)`) are copied in and out like call arguments: the action sees the value from before it wrote the field under the control's name (P4_16 §6.8, §14.2.1.2; audit 10b #1). */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> k; bit<8> r0; bit<8> r1; bit<8> r2; bit<8> r3; }
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
    action a(in bit<8> src, bit<8> d) { hdr.h.r0 = d; hdr.h.r1 = src; }
    action b(inout bit<8> x, bit<8> d) { hdr.h.r2 = d; x = x + 1; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { a(hdr.h.r0); b(hdr.h.r2); NoAction; }
        const entries = { 1 : a(hdr.h.r0, 0x44); 2 : b(hdr.h.r2, 0x44); }
        default_action = NoAction();
    }
    apply { ig_tm_md.ucast_egress_port = 1; t.apply(); }
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
