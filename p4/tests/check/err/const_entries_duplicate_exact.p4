/* Two const entries of an exact table with one key: refused at the second entry. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.b8 = v; }
    table t {
        key = { hdr.ipv4.protocol : exact; }
        actions = { set; }
        const entries = {
            1 : set(1);
            2 : set(2);
            0x01 : set(3);
        }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
