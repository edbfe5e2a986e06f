/* A control instance applied on both sides of an `if` is one table (as in
   shared_instance.p4), and its placement reason is reported once, not once per apply: the ACL
   matches `meta.a16`, which the `classify` table's action writes, so both applies need a stage
   after `classify` (a match dependency, mau/table_dependency_graph.cpp): `classify` in stage 0,
   the ACL in stage 1. */
// expect stage Ingress.classify 0
// expect stage Ingress.acl.acl 1
// expect placed match dependency
#include "../check/head.p4inc"

control Acl(inout metadata_t meta, in bit<16> key) {
    action deny() { meta.flag = true; }
    table acl {
        key = { key : ternary; }
        actions = { deny; NoAction; }
        size = 512;
    }
    apply { acl.apply(); }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Acl() acl;
    action set_class(bit<16> c) { meta.a16 = c; }
    table classify {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_class; NoAction; }
        size = 1024;
    }
    apply {
        classify.apply();
        if (hdr.ipv4.ttl == 1) {
            acl.apply(meta, meta.a16);
        } else {
            acl.apply(meta, meta.a16);
        }
    }
}

#include "../check/tail.p4inc"
