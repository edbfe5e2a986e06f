/* LPM entries need prefix masks. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action a() { }
    table t {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { a; }
        const entries = {
            0x0a000000 &&& 0xff00ff00 : a();
        }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
