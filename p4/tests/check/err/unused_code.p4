/* Actions no table uses and controls no pipeline instantiates are still type-checked. */
#include "../head.p4inc"

control Unused(inout headers_t hdr) {
    apply {
        hdr.ipv4.ttl = hdr.ethernet.ether_type;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action never_used(bit<8> v) {
        meta.flag = v;
    }
    apply { }
}

#include "../tail.p4inc"
