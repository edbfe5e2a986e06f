/* Two tables share an action profile and both look up one packet: warned (the SDE shares a
   profile only between mutually exclusive tables). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    ActionProfile(16) ap;
    action set_a(bit<8> v) { meta.b8 = v; }
    table t1 {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { set_a; }
        implementation = ap;
    }
    table t2 {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { set_a; }
        implementation = ap;
    }
    apply {
        t1.apply();
        t2.apply();
    }
}

#include "../tail.p4inc"
