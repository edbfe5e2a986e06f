/* bf-p4c refuses a range key wider than 5 PHV nibbles (20 bits). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.b8 = v; }
    table t {
        key = { hdr.ipv4.dst_addr : range; }
        actions = { set; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
