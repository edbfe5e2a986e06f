/* A direct counter has one cell per entry of one table: a second table naming it is refused
   (the two tables' entries would share cells). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) dc;
    action hit1() { dc.count(); }
    action hit2() { dc.count(); }
    table t1 {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { hit1; }
        counters = dc;
    }
    table t2 {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { hit2; }
        counters = dc;
    }
    apply { t1.apply(); t2.apply(); }
}

#include "../tail.p4inc"
