/* A directionless control parameter is a compile-time value substituted into the one
 * instance's body: applying the instance with another value is refused, as p4c refuses it. */
#include "../head.p4inc"

control Acl(inout metadata_t meta, bit<8> v) {
    action set() { meta.b8 = v; }
    table t {
        key = { meta.a16 : exact; }
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
            acl.apply(meta, 1);
        } else {
            acl.apply(meta, 2);
        }
    }
}

#include "../tail.p4inc"
