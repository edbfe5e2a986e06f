/* A control may not call, even through another action, an action that uses a direct
 * counter: outside a table's action there is no matched entry to count. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;
    action a() { hits.count(); }
    action b() { a(); }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { a; b; }
        counters = hits;
    }
    apply {
        t.apply();
        b();
    }
}

#include "../tail.p4inc"
