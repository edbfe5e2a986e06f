/* Tofino 2 declarations pisa refuses with the reason: an `IdleTimeout()` instance (IDLE),
 * `invalidate(field)` (INV) and `is_validated(field)` (ISV). Without a define it compiles. */
#include <core.p4>
#include <t2na.p4>
header d_t { bit<8> op; bit<32> a; }
struct headers_t { d_t d; }
struct meta_t { bit<8> x; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t m, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.d); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
#ifdef IDLE
    IdleTimeout() it;
#endif
    apply {
        ig_tm_md.ucast_egress_port = 1;
#ifdef INV
        invalidate(hdr.d.a);
#endif
#ifdef ISV
        if (is_validated(hdr.d.a)) { hdr.d.op = 1; }
#endif
    }
}
control IDp(packet_out pkt, inout headers_t hdr, in meta_t m, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg_intr_md) { state start { pkt.extract(eg_intr_md); transition accept; } }
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md, in egress_intrinsic_metadata_from_parser_t eg_prsr_md, inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md, inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) { apply { } }
control EDp(packet_out pkt, inout headers_t hdr, in meta_t m, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) { apply { pkt.emit(hdr); } }
Pipeline(IP(), Ing(), IDp(), EP(), Eg(), EDp()) pipe;
Switch(pipe) main;
