/* Contextual keywords as names (`type`, `state`: P4_16 nonTypeName, as p4c accepts them) and
   bool keysets (`(true, false)`). (true, false) and (false, _) accept; (true, true) matches no
   case of the default-less select: PARSER_ERROR_NO_MATCH, dropped (parser_err is not read). The control copies `type` into `entries` through a local named `type`. */
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> type; bit<8> key; bit<8> entries; }
struct headers_t { h_t h; }
struct meta_t { bool a; bool b; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t m, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        m.a = hdr.h.type == 1;
        m.b = hdr.h.key == 2;
        transition select(m.a, m.b) {
            (true, false): accept;
            (false, _): accept;
        }
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        bit<8> type = hdr.h.type;
        bit<8> state = type;
        hdr.h.entries = state;
        ig_tm_md.ucast_egress_port = 1;
    }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t m, in ingress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) { state start { pkt.extract(eg); transition accept; } }
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg, in egress_intrinsic_metadata_from_parser_t p, inout egress_intrinsic_metadata_for_deparser_t d, inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m, in egress_intrinsic_metadata_for_deparser_t d) { apply {} }
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
