/* `{#}`, the invalid header expression (P4_16 1.2.2): assigned to a header it makes it
   invalid (not emitted), to a header union every member, to a union member that member;
   as an initializer, a local header that starts invalid; `h == {#}` holds when `h` is invalid
   (a union: when no member is valid) (issue 11, lang 4). */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; }
header g_t { bit<16> b; }
header_union u_t { h_t h; g_t g; }
struct headers_t { h_t x; h_t y; u_t u; }
struct meta_t {}
parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.x);
        pkt.extract(hdr.y);
        pkt.extract(hdr.u.h);
        transition accept;
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        h_t tmp = {#};
        if (hdr.x.a == 1) {
            hdr.y = {#};
        } else if (hdr.x.a == 2) {
            hdr.u = {#};
        } else if (hdr.x.a == 3) {
            hdr.u.h = {#};
        } else if (hdr.x.a == 4) {
            tmp.setValid();
            tmp.a = 0x44;
        }
        if (tmp.isValid()) {
            hdr.y.a = tmp.a;
        }
        if (hdr.u != {#} && hdr.y == {#}) {
            hdr.x.a = hdr.x.a + 0x10;
        }
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
