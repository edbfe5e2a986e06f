/* direct_resources.p4 — a table with a direct counter, a direct meter and idle timeouts (test
 * program for P4Runtime's DirectCounterEntry, DirectMeterEntry and idle-timeout
 * notifications; `send` is @tableonly and `drop` @defaultonly, for the action scopes). An
 * entry of `fwd` sends a frame to a port, counts it and meters it; a RED
 * frame is dropped.
 */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct header_t {
    ethernet_h ethernet;
}

struct metadata_t {
    bit<8> color;
}

parser IgParser(packet_in pkt, out header_t hdr, out metadata_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ig(inout header_t hdr, inout metadata_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) fwd_counter;
    DirectMeter(MeterType_t.BYTES) fwd_meter;

    action send(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        fwd_counter.count();
        md.color = fwd_meter.execute();
    }
    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table fwd {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { @tableonly send; @defaultonly drop; }
        default_action = drop();
        counters = fwd_counter;
        meters = fwd_meter;
        idle_timeout = true;
        size = 64;
    }
    apply {
        md.color = 0;
        fwd.apply();
        if (md.color == 3) {
            ig_dprsr_md.drop_ctl = 1;
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
