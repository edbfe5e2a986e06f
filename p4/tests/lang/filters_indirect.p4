/* An indirect Wred named in a table's `filters` property and an indirect Counter named in its
   `counters` property: bf-p4c attaches every extern a table property names, and an indirect
   one stays addressed by the index its action passes. Table `t` matches byte `a`; its action
   `mark(i)` runs `wred` at index i on byte x and counts index i. Specs from
   filters_indirect.tables.yaml: wred index 1 answers 0xdd (drop) at or above 20 and 0x11
   below 10; index 0 is never configured and never used. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> x;
    bit<8> wred_out;
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
    Wred<bit<8>, bit<1>>(2, 0xdd, 0x11) wred;
    Counter<bit<32>, bit<1>>(2, CounterType_t.PACKETS) hits;

    action mark(bit<1> i) {
        hdr.h.wred_out = wred.execute(hdr.h.x, i);
        hits.count(i);
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { mark; NoAction; }
        filters = wred;
        counters = hits;
        size = 4;
        default_action = NoAction();
    }
    apply {
        t.apply();
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
