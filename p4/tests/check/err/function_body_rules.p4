/* What a function body may not hold (P4_16 "Functions", "Exit statement", "Return statement"):
   `exit`, `return e;` in a `void` function, a path that ends without a return in a function with
   a result, an assignment to an `in` parameter; and the switch label rules ("Switch
   statement"): `default` last, at most one `default`, no label twice. */
#include "../head.p4inc"

void stop() { exit; }
void give(in bit<8> x) { return x; }
bit<8> maybe(in bit<8> x) {
    if (x == 1) {
        return 1;
    }
}
bit<8> write_in(in bit<8> x) {
    x = 2;
    return x;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action a() { meta.b8 = 1; }
    action b() { meta.b8 = 2; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { a; b; }
    }
    apply {
        stop();
        give(meta.b8);
        meta.b8 = maybe(meta.b8) + write_in(meta.b8);
        switch (meta.b8) {
            default: { meta.a16 = 1; }
            1: { meta.a16 = 2; }
        }
        switch (meta.b8) {
            1: { meta.a16 = 1; }
            2:
            1: { meta.a16 = 2; }
            default: { meta.a16 = 3; }
            default: { meta.a16 = 4; }
        }
        switch (t.apply().action_run) {
            a: { meta.a16 = 1; }
            a: { meta.a16 = 2; }
        }
    }
}

#include "../tail.p4inc"
