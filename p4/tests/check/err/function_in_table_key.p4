/* A function called in a table key must be one `return` expression: no statement can run
   before a key is matched (p4c inlines such a call into the key expression). */
#include "../head.p4inc"

bit<8> clamp(in bit<8> x) {
    bit<8> r = x;
    if (x > 100) {
        r = 100;
    }
    return r;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    table t {
        key = { clamp(meta.b8) : exact; }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
