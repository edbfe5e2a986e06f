/* An action using a direct counter must be run by its table, not called. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;
    action a() { hits.count(); }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { a; }
        counters = hits;
    }
    apply {
        t.apply();
        a();
    }
}

#include "../tail.p4inc"
