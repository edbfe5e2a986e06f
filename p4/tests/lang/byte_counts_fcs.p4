/* Byte counts include the 4-byte Ethernet FCS, as the hardware counts it (the SDE's tna_counter
   expects n·(len + 4) bytes): an indexed Counter, a DirectCounter, a byte Meter (ingress) and an
   egress Counter, which counts as eg_intr_md.pkt_length does. The byte meter writes its colour
   into h.c; h.a selects the direct counter's entry. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}
struct headers_t { h_t h; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS_AND_BYTES) whole;
    DirectCounter<bit<32>>(CounterType_t.BYTES) per_entry;
    Meter<bit<1>>(1, MeterType_t.BYTES) bytes_meter;
    action hit() {
        hdr.h.b = 0xee;
        per_entry.count();
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { hit; NoAction; }
        const default_action = NoAction;
        counters = per_entry;
        size = 16;
    }
    apply {
        whole.count(0);
        t.apply();
        hdr.h.c = bytes_meter.execute(0);
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) {
    Counter<bit<32>, bit<1>>(1, CounterType_t.BYTES) eg_bytes;
    apply { eg_bytes.count(0); }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
