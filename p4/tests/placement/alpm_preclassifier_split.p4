/* An ALPM whose pre-classifier is larger than one stage's TCAM: bf-p4c makes the
   pre-classifier a ternary table of its own (midend/alpm.cpp `SplitAlpm`,
   partitions x subtrees entries) and spreads it over stages like any ternary table too large
   for one, ahead of the ATCAM. Here 8192 partitions x 2 subtrees = 16384 entries = 32 rows of
   512, key 5 bytes (one 44-bit TCAM wide): 32 TCAM blocks, more than a Tofino 1 stage's 24.
   The pre-classifier fills the earliest parts a stage's worth each (24 in stage 0, 8 in
   stage 1); the ATCAM's SRAM is shared over the parts as before and `after` follows the
   last part. (Before, the whole pre-classifier went with the first part, which then fit no
   stage, and the table was refused.) */
// expect stage_tcam 0 24
// expect stage_tcam 1 8
// expect stage Ingress.lpm (part 2 of 2) 1
// expect stage Ingress.after 2
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_nh(bit<16> nh) { meta.a16 = nh; }
    action miss() { meta.flag = true; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    Alpm(number_partitions = 8192, subtrees_per_partition = 2) algo;
    table lpm {
        key = {
            meta.b8 : exact;
            hdr.ipv4.dst_addr : lpm;
        }
        actions = { set_nh; miss; }
        const default_action = miss();
        size = 131072;
        implementation = algo;
    }
    table after {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    apply {
        lpm.apply();
        after.apply();
    }
}

#include "../check/tail.p4inc"
