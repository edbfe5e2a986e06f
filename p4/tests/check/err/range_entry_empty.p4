/* A const range entry whose low end is above its high end matches nothing: refused where it
   is written, not when the switch is built. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.b8 = v; }
    table t {
        key = { hdr.ipv4.total_len : range; }
        actions = { set; }
        const entries = {
            10 .. 20 : set(1);
            30 .. 25 : set(2);
        }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
