/* Of the tables that can start in one stage, one whose `@stage` asks for that stage goes first
   (mau/table_placement.cpp `is_better`: `PROV_STAGE` right after the start stage, before
   `@placement_priority`). 17 independent tables, one more than stage 0's 16 logical table
   ids: t16, last in program order, is pinned to stage 0 and takes an id before the others,
   even before t0 with `@placement_priority(5)`; t15 waits for stage 1. bf-p4c reads `@stage`
   on match tables only: on the control it is ignored, and a warning says so. */
// expect stage Ingress.t16 0
// expect stage Ingress.t0 0
// expect stage Ingress.t15 1
// expect placed Ingress.t16: pinned by `@stage(0)`
// expect warning annotation `@stage` accepted, ignored: it places tables, and is read on a table declaration only
#include "../check/head.p4inc"

#define T(n) table t##n { key = { hdr.ipv4.ttl : exact; } actions = { NoAction; } size = 16; }

@stage(3)
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @placement_priority(5)
    T(0)
    T(1) T(2) T(3) T(4) T(5) T(6) T(7)
    T(8) T(9) T(10) T(11) T(12) T(13) T(14) T(15)
    @stage(0)
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
