/* Meter colour encodings: Meter(size, type, red, yellow, green) and DirectMeter(type, red,
 * yellow, green) return the program's own values. The indexed meter's result goes to
 * data.indexed, the direct meter's (from a table hit) to data.direct. data.adjusted is a
 * default-coloured meter run as execute(index, adjust_byte_count): the bit<32> argument is a
 * byte adjustment, not a pre-colour. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header data_h {
    bit<8> indexed;
    bit<8> direct;
    bit<8> adjusted;
}

struct headers_t {
    ethernet_h ethernet;
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
    /* red 0xAA, yellow 0x55, green 0x0F */
    Meter<bit<1>>(1, MeterType_t.PACKETS, 8w0xAA, 8w0x55, 8w0x0F) policer;
    DirectMeter(MeterType_t.PACKETS, 8w0xAA, 8w0x55, 8w0x0F) direct_policer;
    Meter<bit<1>>(1, MeterType_t.PACKETS) plain;

    action mark() { hdr.data.direct = direct_policer.execute(); }
    table classify {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { mark; NoAction; }
        const entries = { 0x88b5 : mark(); }
        default_action = NoAction;
        meters = direct_policer;
        size = 16;
    }

    apply {
        hdr.data.indexed = policer.execute(0);
        hdr.data.adjusted = plain.execute(0, 32w3);
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
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
