/* 33 actions each calling the next (a table action a32, then a31 ... a0): 33 action bodies
   nested, one more than the model runs; the error is at the call that passes the limit (it
   was an internal "malformed IR" message with no location). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action a0() { hdr.ipv4.ttl = hdr.ipv4.ttl + 1; }
    action a1() { a0(); }
    action a2() { a1(); }
    action a3() { a2(); }
    action a4() { a3(); }
    action a5() { a4(); }
    action a6() { a5(); }
    action a7() { a6(); }
    action a8() { a7(); }
    action a9() { a8(); }
    action a10() { a9(); }
    action a11() { a10(); }
    action a12() { a11(); }
    action a13() { a12(); }
    action a14() { a13(); }
    action a15() { a14(); }
    action a16() { a15(); }
    action a17() { a16(); }
    action a18() { a17(); }
    action a19() { a18(); }
    action a20() { a19(); }
    action a21() { a20(); }
    action a22() { a21(); }
    action a23() { a22(); }
    action a24() { a23(); }
    action a25() { a24(); }
    action a26() { a25(); }
    action a27() { a26(); }
    action a28() { a27(); }
    action a29() { a28(); }
    action a30() { a29(); }
    action a31() { a30(); }
    action a32() { a31(); }
    table t {
        key = { hdr.ipv4.protocol : exact; }
        actions = { a32; }
        size = 16;
    }
    apply {
        t.apply();
    }
}

#include "../tail.p4inc"
