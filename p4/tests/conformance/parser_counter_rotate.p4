/* ParserCounter.set(field, max, rotate, mask, add): value = (rotr8(b, rotate) & mask) + add,
   range check on the raw byte b > max (tofino-model parser.cpp, notes §4). b = 0x20, rotate 4,
   mask 1 (0b11), add 1 -> 3 items, then a marker byte that ingress overwrites with 0xEE.
   Ingress copies parser_err's low byte into h.err. */
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header h_t { bit<8> n; bit<8> max; bit<8> err; }
header item_t { bit<8> v; }
struct hdr_t { ethernet_h eth; h_t h; item_t[6] items; item_t mark; }
struct md_t { }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.h);
        transition select(hdr.h.max) { 0xff: big; default: small; }
    }
    state big { pc.set(hdr.h.n, 255, 4, 1, 1); transition item; }
    state small { pc.set(hdr.h.n, 16, 4, 1, 1); transition item; }
    state item {
        pkt.extract(hdr.items.next);
        pc.decrement(1);
        transition select(pc.is_zero()) { true: marker; false: item; }
    }
    state marker { pkt.extract(hdr.mark); transition accept; }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        hdr.h.err = pm.parser_err[7:0];
        if (hdr.mark.isValid()) { hdr.mark.v = 0xEE; }
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) { apply { pkt.emit(hdr); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
