/* Of the tables that can start in one stage, the one with the longest dependency chain below
   it is placed first, as bf-p4c's table placement chooses (mau/table_placement.cpp
   `is_better`: the stage a candidate can start in, then `@stage`, priority, and the downward
   dependency chain), not program order. Sixteen independent tables t0..t15 come first in the
   program and would fill stage 0's 16 logical table ids, pushing the chain head -> tail to
   stages 1 and 2 (3 stages). The chain goes first: head in stage 0, tail (matching on what
   head writes) in stage 1, 15 of the independent tables beside head in stage 0 and the last
   one beside tail in stage 1: 2 stages. */
// expect stage Ingress.head 0
// expect stage Ingress.tail 1
// expect stage Ingress.t15 1
// expect stage_logical 0 16
// expect stage_logical 1 2
#include "../check/head.p4inc"

#define T(n) table t##n { key = { hdr.ipv4.ttl : exact; } actions = { NoAction; } size = 16; }

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    T(0) T(1) T(2) T(3) T(4) T(5) T(6) T(7)
    T(8) T(9) T(10) T(11) T(12) T(13) T(14) T(15)
    table head {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_b; NoAction; }
        size = 1024;
    }
    table tail {
        key = { meta.b8 : exact; }
        actions = { set_a; NoAction; }
        size = 256;
    }
    apply {
        t0.apply(); t1.apply(); t2.apply(); t3.apply();
        t4.apply(); t5.apply(); t6.apply(); t7.apply();
        t8.apply(); t9.apply(); t10.apply(); t11.apply();
        t12.apply(); t13.apply(); t14.apply(); t15.apply();
        head.apply();
        tail.apply();
    }
}

#include "../check/tail.p4inc"
