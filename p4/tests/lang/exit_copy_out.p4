/* `exit` in a control instance applied in two places with different arguments still copies its `inout` parameter back (P4_16 "Exit statement"; audit 10b #2). */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> r0; bit<8> r1; bit<8> r2; bit<8> r3; bit<8> r4; bit<8> r5; }
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
control C(inout bit<8> x) {
    apply { x = 5; exit; }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    C() c;
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.h.r5 == 1) {
            c.apply(hdr.h.r0);
        } else {
            c.apply(hdr.h.r1);
        }
        hdr.h.r2 = 0x22;
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
