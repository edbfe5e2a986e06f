/* An ALPM table larger than a stage, split over two: bf-p4c splits an ALPM into a pre-classifier
   TCAM table and an ATCAM (midend/alpm.cpp `SplitAlpm`); the ATCAM matches on the partition
   index the pre-classifier sets, so the pre-classifier comes first, and the ATCAM's entries are
   spread over stages like any table too large for one (mau/table_placement.cpp), its result in
   its last part. Sizes worked out by hand from bf-p4c's layout rules:
   - ATCAM: 262144 entries / 2048 partitions = 128 a partition, 2 ways of RAMs (2048 / 1024);
     key = 1-bit subtree id + the 18-bit window stored twice = 37 bits, + 4 version bits and a
     1-bit instruction = 42 bits: 3 entries a 128-bit word, 43 RAMs deep x 2 ways = 86 RAMs,
     + an action data table for 43 x 2 x 3 x 1024 = 264192 slots of 16 bits, 8 a word:
     33 RAMs (immediate data instead: 58-bit entries, 2 a word, 128 RAMs);
   - pre-classifier: 2048 x 2 = 4096 entries = 8 rows of 512, key 5 bytes -> 8 TCAM blocks;
     its 16-bit result (4-bit instruction for 15 actions, 11-bit index, subtree id) 8 a word:
     1 RAM.
   The ATCAM is cut into logical tables of at most 5 RAMs deep (mau/resource_estimate.cpp
   `calculate_partition_sizes`): 43 / 5 -> 9, + the pre-classifier = 10 logical table ids.
   120 RAMs do not fit one stage's 80: two parts of 60 and 5 logical tables each (`after` adds
   one in stage 2), the pre-classifier's 8 TCAM blocks with
   the first (pisa puts it in the stage of the ATCAM's first part); `after` matches on what the
   table writes, so it follows the last part. */
// expect stage Ingress.lpm (part 1 of 2) 0
// expect stage Ingress.lpm (part 2 of 2) 1
// expect stage Ingress.after 2
// expect sram 124
// expect stage_tcam 0 8
// expect stage_tcam 1 0
// expect stage_logical 0 5
// expect stage_logical 1 5
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_nh(bit<16> nh) { meta.a16 = nh; }
    action miss() { meta.flag = true; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    Alpm(number_partitions = 2048, subtrees_per_partition = 2,
         atcam_subset_width = 18, shift_granularity = 1) algo;
    table lpm {
        key = {
            meta.b8 : exact;
            hdr.ipv4.dst_addr : lpm;
        }
        actions = { set_nh; miss; }
        const default_action = miss();
        size = 262144;
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
