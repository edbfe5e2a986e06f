/* `@placement_priority("other")`: of two tables that can start in one stage, the one naming the
   other goes first (mau/table_placement.cpp `is_better`, `PRIORITY`: the string form is
   compared before the numbers). 17 independent tables, one more than stage 0's 16 logical
   table ids: in program order t16 would wait for stage 1, but it names t0, so it takes a
   stage-0 id before t0 and the last of the others, t15, waits instead. A name matching no
   table is warned about, as bf-p4c does (`CheckPlacementPriorities`). */
// expect stage Ingress.t16 0
// expect stage Ingress.t0 0
// expect stage Ingress.t15 1
// expect warning `@placement_priority("Ingress.nothing")` on table `Ingress.t1` names no ingress table; ignored
// expect no_warning not modelled
#include "../check/head.p4inc"

#define T(n) table t##n { key = { hdr.ipv4.ttl : exact; } actions = { NoAction; } size = 16; }

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    T(0)
    @placement_priority("Ingress.nothing")
    T(1)
    T(2) T(3) T(4) T(5) T(6) T(7)
    T(8) T(9) T(10) T(11) T(12) T(13) T(14) T(15)
    @placement_priority("Ingress.t0")
    T(16)
    apply {
        t0.apply(); t1.apply(); t2.apply(); t3.apply();
        t4.apply(); t5.apply(); t6.apply(); t7.apply();
        t8.apply(); t9.apply(); t10.apply(); t11.apply();
        t12.apply(); t13.apply(); t14.apply(); t15.apply();
        t16.apply();
    }
}

#include "../check/tail.p4inc"
