/* @ignore_table_dependency("other") drops the data dependencies between the two tables, both
   ways, as bf-p4c's IgnoreTableDeps does (mau/table_mutex.cpp): the name is a table's
   control-qualified name, or its @name with or without the leading dot; a name matching no
   table is warned about.
   - acl2 writes meta.b8 like acl1 (an output dependency, stage 1 without the annotation):
     with it, both sit in stage 0, and pisa warns that it runs them in program order where the
     hardware would not see acl1's write.
   - acl3 matches on meta.a16, which acl1 writes; the annotation names `.acl_one`, acl1's
     @name: stage 0 too, with a warning.
   - `Ingress.missing` names nothing: warned, ignored. */
// expect stage acl_one 0
// expect stage Ingress.acl2 0
// expect stage Ingress.acl3 0
// expect warning `Ingress.acl2` shares stage 0 with `acl_one` although it has a output dependency on it through `meta.b8`, dropped by `@ignore_table_dependency`
// expect warning `Ingress.acl3` shares stage 0 with `acl_one` although it has a match dependency on it through `meta.a16`
// expect warning `@ignore_table_dependency("Ingress.missing")` on table `Ingress.acl3` names no ingress table; ignored
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action deny() { meta.b8 = 1; meta.a16 = 7; }
    action deny2() { meta.b8 = 2; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    @name(".acl_one")
    table acl1 {
        key = { hdr.ipv4.src_addr : ternary; }
        actions = { deny; NoAction; }
        size = 256;
    }
    @ignore_table_dependency("Ingress.acl1")
    table acl2 {
        key = { hdr.ipv4.dst_addr : ternary; }
        actions = { deny2; NoAction; }
        size = 256;
    }
    @ignore_table_dependency(".acl_one")
    @ignore_table_dependency("Ingress.missing")
    table acl3 {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    apply {
        acl1.apply();
        acl2.apply();
        acl3.apply();
    }
}

#include "../check/tail.p4inc"
