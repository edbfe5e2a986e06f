#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header data_h { bit<16> rv; }
struct pair_t { bit<16> lo; bit<16> hi; }
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
    Counter<bit<32>, bit<8>>(4, CounterType_t.PACKETS_AND_BYTES) c;
    Register<pair_t, bit<8>>(4) r;
    RegisterAction<pair_t, bit<8>, bit<16>>(r) ra = {
        void apply(inout pair_t v, out bit<16> rv) {
            if (v.lo > 3) { v.hi = v.hi + 1; }
            v.lo = v.lo + 1;
            rv = v.hi;
        }
    };
    apply {
        tm.ucast_egress_port = 1;
        c.count(0);
        hdr.d.rv = ra.execute(1);
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
    Counter<bit<32>, bit<8>>(4, CounterType_t.PACKETS_AND_BYTES) ce;
    apply { ce.count(0); }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
