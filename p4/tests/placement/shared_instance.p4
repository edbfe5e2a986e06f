/* A control instance applied in mutually exclusive places holds one table, as in bf-p4c (one
   table applied in several places, mau/table_dependency_graph.cpp): its memories are counted
   once, and all its applies share one stage. The ACL here takes 1 TCAM block (512 entries of a
   32-bit ternary key); applied on both sides of an `if`, the ingress uses 1 block, not 2. */
// expect stage Ingress.acl.acl 0
// expect tcam 1
#include "../check/head.p4inc"

control Acl(inout metadata_t meta, in bit<32> addr) {
    action deny() { meta.flag = true; }
    table acl {
        key = { addr : ternary; }
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
    apply {
        if (hdr.ipv4.ttl == 1) {
            acl.apply(meta, hdr.ipv4.src_addr);
        } else {
            acl.apply(meta, hdr.ipv4.src_addr);
        }
    }
}

#include "../check/tail.p4inc"
