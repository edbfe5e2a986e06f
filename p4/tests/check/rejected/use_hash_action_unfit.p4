// `@use_hash_action(1)` on a table that cannot be a hash-action table: 1000 entries of a
// 16-bit key are not a row for every key value (2^16). bf-p4c refuses it
// (mau/table_layout.cpp `add_hash_action_option`: "is required to be a hash action table, but
// cannot be due to the size is not 2^(key bits)").
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_a(bit<16> v) { meta.a16 = v; }
    @use_hash_action(1)
    table by_id {
        key = { hdr.ipv4.identification : exact; }
        actions = { set_a; }
        default_action = set_a(0);
        size = 1000;
    }
    apply {
        by_id.apply();
    }
}

#include "../tail.p4inc"
