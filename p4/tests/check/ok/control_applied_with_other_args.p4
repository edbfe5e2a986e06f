/* One control instance applied with different arguments is one table `Ingress.acl.t`: as
 * p4c's inliner does, the parameter the applies bind differently becomes a temporary
 * (`Ingress.acl.k`) copied in before the table at each apply; `meta`, the same at both, is
 * used in place. No warning: bf-p4c does this too. */
#include "../head.p4inc"

control Acl(in bit<16> k, inout metadata_t meta) {
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
            acl.apply(hdr.ethernet.ether_type, meta);
        }
    }
}

#include "../tail.p4inc"
