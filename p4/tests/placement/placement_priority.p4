/* `@placement_priority(n)`: of the tables that can start in one stage, bf-p4c places the higher
   priority first, before it looks at the dependency chains (mau/table_placement.cpp
   `is_better`: `PRIORITY` comes before `DOWNWARD_PROP_DSC`; tables without one have 0).
   As critical_first.p4, 16 independent tables and a chain head -> tail, but t15 has priority 1:
   it takes stage 0's first logical table id, head (the longest chain) the next, t0..t13 the
   other 14; t14, the last in program order, waits for stage 1 beside tail. (The form naming
   tables to place before: placement_priority_names.p4.) */
// expect stage Ingress.t15 0
// expect stage Ingress.head 0
// expect stage Ingress.t14 1
// expect stage Ingress.tail 1
#include "../check/head.p4inc"

#define T(n) table t##n { key = { hdr.ipv4.ttl : exact; } actions = { NoAction; } size = 16; }

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    T(0)
    T(1) T(2) T(3) T(4) T(5) T(6) T(7)
    T(8) T(9) T(10) T(11) T(12) T(13) T(14)
    @placement_priority(1)
    T(15)
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
