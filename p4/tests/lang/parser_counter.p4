/* ParserCounter: a count byte loads the counter (range-checked against max, masked), each item
   state decrements it and selects on is_zero(). The state that loads the counter from a field
   reads its flags as false (the load lands a cycle later), so a count of 0 still parses an
   item, the counter goes negative, and the parse ends where the stack would overflow (the
   stack full, no error: bf-p4c ends an unrolled loop there). A count above max is a
   CounterRange parser error: dropped. The control writes the number of parsed
   items into the count byte's high nibble. */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> n; }
header item_t { bit<8> v; }
struct headers_t {
    h_t h;
    item_t[4] items;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pc.set(hdr.h.n, 4, 0, 2, 0);    /* max 4; Tofino 1 mask 2 is 0b111 */
        transition select(pc.is_zero()) {   /* false here, whatever the count */
            true: accept;
            false: item;
        }
    }
    state item {
        pkt.extract(hdr.items.next);
        pc.decrement(1);
        transition select(pc.is_zero()) {
            true: accept;
            false: item;
        }
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        bit<8> k = 0;
        if (hdr.items[3].isValid()) { k = 0x40; }
        else if (hdr.items[2].isValid()) { k = 0x30; }
        else if (hdr.items[1].isValid()) { k = 0x20; }
        else if (hdr.items[0].isValid()) { k = 0x10; }
        hdr.h.n = hdr.h.n | k;
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
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
