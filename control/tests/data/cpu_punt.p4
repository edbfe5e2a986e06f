/* cpu_punt.p4 — packet I/O with a P4Runtime controller (test program).
 *
 * Frames from the CPU port (64) start with a packet_out header: the switch sends the rest out
 * of the port it names. Other frames go through `punt`: an EtherType entry sends the frame to
 * the CPU port with a packet_in header (the port it came in on) in front; no entry drops it.
 */
#include <core.p4>
#include <tna.p4>

const PortId_t CPU_PORT = 64;

@controller_header("packet_out")
header packet_out_h {
    PortId_t egress_port;
    bit<7>   pad;
}

@controller_header("packet_in")
header packet_in_h {
    PortId_t ingress_port;
    bit<7>   pad;
}

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct header_t {
    packet_in_h  packet_in;
    packet_out_h packet_out;
    ethernet_h   ethernet;
}

struct metadata_t {}

parser IgParser(packet_in pkt, out header_t hdr, out metadata_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
            CPU_PORT : parse_packet_out;
            default : parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ig(inout header_t hdr, inout metadata_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action to_cpu() {
        ig_tm_md.ucast_egress_port = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = ig_intr_md.ingress_port;
        hdr.packet_in.pad = 0;
    }
    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table punt {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { to_cpu; drop; }
        default_action = drop();
        size = 64;
    }
    apply {
        if (hdr.packet_out.isValid()) {
            ig_tm_md.ucast_egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            punt.apply();
        }
    }
}

control IgDeparser(packet_out pkt, inout header_t hdr, in metadata_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out header_t hdr, out metadata_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout header_t hdr, inout metadata_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control EgDeparser(packet_out pkt, inout header_t hdr, in metadata_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
