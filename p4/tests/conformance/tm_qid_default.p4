#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header data_h { bit<8> q; bit<8> eq; }

struct hdr_t { ethernet_h eth; data_h d; }
struct md_t { }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {

    apply {
        tm.ucast_egress_port = 1;
        tm.qid = (QueueId_t)hdr.d.q;
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {

    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {

    apply { hdr.d.eq = (bit<8>)eg.egress_qid; }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
