/* A register's stateful ALU holds four RegisterActions: a fifth is refused, as by bf-p4c. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<8>>(256) r;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r) add1 = { void apply(inout bit<16> v, out bit<16> o) { v = v + 1; o = v; } };
    RegisterAction<bit<16>, bit<8>, bit<16>>(r) add2 = { void apply(inout bit<16> v, out bit<16> o) { v = v + 2; o = v; } };
    RegisterAction<bit<16>, bit<8>, bit<16>>(r) add3 = { void apply(inout bit<16> v, out bit<16> o) { v = v + 3; o = v; } };
    RegisterAction<bit<16>, bit<8>, bit<16>>(r) add4 = { void apply(inout bit<16> v, out bit<16> o) { v = v + 4; o = v; } };
    RegisterAction<bit<16>, bit<8>, bit<16>>(r) add5 = { void apply(inout bit<16> v, out bit<16> o) { v = v + 5; o = v; } };
    action a1() { meta.a16 = add1.execute(meta.b8); }
    action a2() { meta.a16 = add2.execute(meta.b8); }
    action a3() { meta.a16 = add3.execute(meta.b8); }
    action a4() { meta.a16 = add4.execute(meta.b8); }
    action a5() { meta.a16 = add5.execute(meta.b8); }
    table t {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { a1; a2; a3; a4; a5; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
