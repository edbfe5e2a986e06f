/* A 320-bit field computed on, matched in a table, copied from a narrower field, and sliced
   wider than 128 bits: each refused with what can be done instead. */
#define CUSTOM_PARSER
#include "../head.p4inc"

header big_h {
    bit<320> data;
    bit<160> half;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    big_h big;
    action a() { }
    table t {
        key = { big.data : exact; }
        actions = { a; }
    }
    apply {
        big.data = big.data + 1;
        big.data = big.half ++ big.half;
        meta.a16 = big.data[200:0][15:0];
        t.apply();
    }
}

#include "../tail.p4inc"
