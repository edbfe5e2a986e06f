/* A 20-bit range key that starts 2 bits into a nibble covers 6 PHV nibbles; bf-p4c's range
 * match takes at most 5 (mau/resource_estimate.cpp RangeEntries: one 5-byte ternary crossbar
 * group), whatever the key's width. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.b8 = v; }
    table acl {
        key = { hdr.ipv4.src_addr[21:2] : range; }
        actions = { set; NoAction; }
        default_action = NoAction;
        size = 256;
    }
    apply { acl.apply(); }
}

#include "../tail.p4inc"
