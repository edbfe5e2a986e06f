/* `@stage(n)` that the dependencies make impossible: `tail` matches on what `head` writes, so
   it needs a stage after `head`'s; pinned to stage 0 it still goes to stage 1, and bf-p4c
   warns (mau/table_summary.cpp: "The stage specified for T is n, but we could not place it
   until stage m", a warning, not an error). `head` is pinned to stage 2 (a second pin in the
   chain): `tail`, asked for stage 0, lands in stage 3 and the warning gives the reason. */
// expect stage Ingress.head 2
// expect stage Ingress.tail 3
// expect warning the stage specified for `Ingress.tail` is 0, but it could not be placed until stage 3
// expect warning Ingress.tail: after Ingress.head (match dependency on `meta.b8`)
// expect no_warning the stage specified for `Ingress.head`
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    @stage(2)
    table head {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_b; NoAction; }
        size = 256;
    }
    @stage(0)
    table tail {
        key = { meta.b8 : exact; }
        actions = { set_a; NoAction; }
        size = 256;
    }
    apply {
        head.apply();
        tail.apply();
    }
}

#include "../check/tail.p4inc"
