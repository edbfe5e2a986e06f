/* A generic control instance applied with arguments of two types would need two table
 * layouts under one name: refused. */
#include "../head.p4inc"

control Acl<K>(in K k, inout metadata_t meta) {
    action set(bit<8> v) { meta.b8 = v; }
    table t {
        key = { k : exact; }
        actions = { set; NoAction; }
        default_action = NoAction;
    }
    apply { t.apply(); }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Acl() acl;
    apply {
        if (hdr.ipv4.isValid()) {
            acl.apply(hdr.ipv4.total_len, meta);
        } else {
            acl.apply(meta.b8, meta);
        }
    }
}

#include "../tail.p4inc"
