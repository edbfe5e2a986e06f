/* wire.p4 — the smallest useful TNA program: parse Ethernet, send every frame out of the port
 * a one-entry-per-port table names. `pisa bench pipeline` runs it beside l2l3.p4 as the
 * baseline: the cost of the pipeline's fixed parts (prefix, parser, one exact table, deparser,
 * traffic manager) without l2l3's work.
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct header_t {
    ethernet_h ethernet;
}

struct metadata_t {}

parser WireIngressParser(packet_in pkt,
                         out header_t hdr,
                         out metadata_t ig_md,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control WireIngress(inout header_t hdr,
                    inout metadata_t ig_md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action send(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.bypass_egress = 1;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    table port_fwd {
        key = {
            ig_intr_md.ingress_port : exact;
        }
        actions = {
            send;
            drop;
        }
        default_action = drop();
        size = 512;
    }

    apply {
        port_fwd.apply();
    }
}

control WireIngressDeparser(packet_out pkt,
                            inout header_t hdr,
                            in metadata_t ig_md,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser WireEgressParser(packet_in pkt,
                        out header_t hdr,
                        out metadata_t eg_md,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control WireEgress(inout header_t hdr,
                   inout metadata_t eg_md,
                   in egress_intrinsic_metadata_t eg_intr_md,
                   in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                   inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control WireEgressDeparser(packet_out pkt,
                           inout header_t hdr,
                           in metadata_t eg_md,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(WireIngressParser(),
         WireIngress(),
         WireIngressDeparser(),
         WireEgressParser(),
         WireEgress(),
         WireEgressDeparser()) pipe;

Switch(pipe) main;
