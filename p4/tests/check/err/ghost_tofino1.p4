/* A ghost control (Pipeline's seventh block) on Tofino 1: its TM sends no queue updates. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

control Ghost(in bit<32> qlength) {
    apply { }
}

#define PIPELINE_EXTRA , Ghost()
#include "../tail.p4inc"
