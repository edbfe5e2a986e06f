/* One control instance applied twice on one path: its table is one match unit, looked up at
 * most once per packet, so the second lookup has no table to run on (applies of one instance
 * in exclusive branches are fine: tests/lang/shared_control.p4). */
#include "../head.p4inc"

control Acl(in bit<48> k, inout metadata_t meta) {
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
        acl.apply(hdr.ethernet.dst_addr, meta);
        acl.apply(hdr.ethernet.dst_addr, meta);
    }
}

#include "../tail.p4inc"
