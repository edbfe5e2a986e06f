// Tofino 2 deparser trigger of the packet generator: a packet with EtherType 0x88b6 sets
// ig_intr_md_for_dprsr.pktgen and gives `Pktgen.emit` its trigger header, then is dropped;
// generated packets (on the pktgen port 6 of pipe 0) go out of port 3.
// -D RESUBMIT: the trigger packet's first pass is also resubmitted (the second pass only sets
// pktgen again). -D UNCONDITIONAL: `Pktgen.emit` outside an `if` (refused, as bf-p4c does).
#include <t2na.p4>

header ethernet_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header trig_h { bit<8> kind; bit<24> seq; }
struct hdr_t { ethernet_h eth; trig_h trig; }
struct md_t {}

parser IgP(packet_in pkt, out hdr_t hdr, out md_t md,
           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x88b6: parse_trig;
            default: accept;
        }
    }
    state parse_trig { pkt.extract(hdr.trig); transition accept; }
}

control Ig(inout hdr_t hdr, inout md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.trig.isValid()) {
            ig_dprsr_md.pktgen = 1;
            ig_dprsr_md.pktgen_address = 400;
            ig_dprsr_md.pktgen_length = 64;
            ig_dprsr_md.drop_ctl = 1;
#ifdef RESUBMIT
            if (ig_intr_md.resubmit_flag == 0) {
                ig_dprsr_md.resubmit_type = 1;
                ig_dprsr_md.drop_ctl = 0;
            }
#endif
        } else if (ig_intr_md.ingress_port == 6) {
            ig_tm_md.ucast_egress_port = 3;
        }
    }
}

control IgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Pktgen() pg;
    Resubmit() resub;
    apply {
#ifdef UNCONDITIONAL
        pg.emit(hdr.trig);
#else
        if (ig_dprsr_md.pktgen == 1) {
            pg.emit(hdr.trig);
        }
#endif
        if (ig_dprsr_md.resubmit_type == 1) {
            resub.emit();
        }
        pkt.emit(hdr);
    }
}

parser EgP(packet_in pkt, out hdr_t hdr, out md_t md,
           out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Eg(inout hdr_t hdr, inout md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
