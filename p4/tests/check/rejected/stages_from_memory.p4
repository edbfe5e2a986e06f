// Twenty independent exact tables of 256K entries each: no dependency between them (one stage
// would do), but their memories fill more than a Tofino 1's 12 stages. The error says how many
// stages the dependencies need and how many memory adds, since memory sizes are bf-p4c's
// estimate formulas (mau/resource_estimate.cpp), not its final layout.
#include "../head.p4inc"

#define T(n) table t##n { key = { hdr.ipv4.dst_addr : exact; } actions = { NoAction; } size = 262144; }

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    T(0) T(1) T(2) T(3) T(4) T(5) T(6) T(7) T(8) T(9)
    T(10) T(11) T(12) T(13) T(14) T(15) T(16) T(17) T(18) T(19)
    apply {
        t0.apply(); t1.apply(); t2.apply(); t3.apply(); t4.apply();
        t5.apply(); t6.apply(); t7.apply(); t8.apply(); t9.apply();
        t10.apply(); t11.apply(); t12.apply(); t13.apply(); t14.apply();
        t15.apply(); t16.apply(); t17.apply(); t18.apply(); t19.apply();
    }
}

#include "../tail.p4inc"
