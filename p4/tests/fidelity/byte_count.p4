/* Byte accounting of counters and meters. Ingress: `ig_whole` counts whole packets,
 * `ig_adjusted` the same with count(0, 20), the direct counter of `classify` with
 * count(100) (a packet shorter than 100 bytes counts 0 bytes), and the byte meter `ig_meter`
 * runs execute(0, 40); its colour goes to data.color. Egress adds a 4-byte tag after the
 * Ethernet header, or takes it off when the packet arrives with one. `eg_entry` counts the
 * packet as egress received it; with -DTRUE_EGRESS (Tofino 2, t2na.p4) `eg_true` and the
 * direct counter of `eg_classify` count it as the egress deparser sends it, `eg_true_adjusted`
 * the same less 10 bytes, and the true-egress byte meter `eg_meter` (coloured by the received
 * length, charged with the sent one) writes its colour to tag.color. */
#include <core.p4>
#ifdef TRUE_EGRESS
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header data_h {
    bit<8> color;
}

header tag_h {
    bit<8>  marker;
    bit<8>  color;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_h ethernet;
    tag_h      tag;
    data_h     data;
}
struct metadata_t { }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS_AND_BYTES) ig_whole;
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS_AND_BYTES) ig_adjusted;
    DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES) ig_direct;
    Meter<bit<1>>(1, MeterType_t.BYTES) ig_meter;

    action hit() { ig_direct.count(100); }
    table classify {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { hit; NoAction; }
        const entries = { 2 : hit(); }
        default_action = NoAction;
        counters = ig_direct;
        size = 16;
    }

    apply {
        ig_whole.count(0);
        ig_adjusted.count(0, 20);
        hdr.data.color = ig_meter.execute(0, 40);
        classify.apply();
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x9000: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS_AND_BYTES) eg_entry;
#ifdef TRUE_EGRESS
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS_AND_BYTES, true) eg_true;
    Counter<bit<32>, bit<1>>(1, CounterType_t.BYTES, true)
        eg_true_adjusted;
    Meter<bit<1>>(1, MeterType_t.BYTES, true) eg_meter;
    DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES, true) eg_direct;

    action eg_hit() { eg_direct.count(); }
    table eg_classify {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { eg_hit; NoAction; }
        const entries = { 2 : eg_hit(); }
        default_action = NoAction;
        counters = eg_direct;
        size = 16;
    }
#endif

    apply {
        bit<8> color = 0;
        eg_entry.count(0);
#ifdef TRUE_EGRESS
        eg_true.count(0);
        eg_true_adjusted.count(0, 10);
        color = eg_meter.execute(0);
        eg_classify.apply();
#endif
        if (hdr.tag.isValid()) {
            hdr.ethernet.ether_type = hdr.tag.ether_type;
            hdr.tag.setInvalid();
        } else {
            hdr.tag.setValid();
            hdr.tag.marker = 0xab;
            hdr.tag.color = color;
            hdr.tag.ether_type = hdr.ethernet.ether_type;
            hdr.ethernet.ether_type = 0x9000;
        }
    }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.tag); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
