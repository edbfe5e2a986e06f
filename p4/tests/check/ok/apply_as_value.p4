/* A table result stored in a field outside a condition (rewritten into an if, as p4c TableHit). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action a() { }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { a; }
    }
    apply {
        meta.flag = t.apply().hit;
    }
}

#include "../tail.p4inc"
