// An unsized literal of 2^127 or more too wide for the field it is assigned to is an error,
// as a smaller one is (it was cut to its low bits with a warning).
#include <core.p4>
#include <tna.p4>
header ipv4_h { bit<8> ttl; bit<8> p; }
struct headers_t { ipv4_h ipv4; }
struct meta_t {}
parser IP(packet_in pkt, out headers_t hdr, out meta_t m, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.ipv4); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.ipv4.ttl = 170141183460469231731687303715884105728;
    }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t m, in ingress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg_intr_md) { state start { pkt.extract(eg_intr_md); transition accept; } }
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md, in egress_intrinsic_metadata_from_parser_t p, inout egress_intrinsic_metadata_for_deparser_t d, inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m, in egress_intrinsic_metadata_for_deparser_t d) { apply { } }
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
