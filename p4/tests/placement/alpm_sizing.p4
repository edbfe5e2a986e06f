/* An ALPM table sized as bf-p4c lays it out (midend/alpm.cpp `SplitAlpm`, mau/table_layout.cpp
   `setup_exact_match`, mau/resource_estimate.cpp `options_to_atcam_entries` and
   `options_to_ternary_entries`), worked out by hand:
   - the pre-classifier TCAM: 1024 partitions x 2 subtrees = 2048 entries = 4 rows of 512; its
     key (vrf 1 byte + prefix 4 bytes = 5 bytes) fits one TCAM wide: 4 TCAM blocks. Its result,
     a 4-bit instruction (15 actions, one per shift of the 18-bit window over the 32-bit key:
     (32 - 18) / 1 + 1) + 10-bit partition index + 1-bit subtree id = 15 bits, goes 8 to a
     ternary-indirection word: 2048 / 8192 -> 1 RAM;
   - the ATCAM's key is only the subtree id (1 bit, exact) and the 18-bit prefix window (lpm,
     stored twice): 37 bits; the vrf is matched by the pre-classifier alone and the partition
     index is the RAM row. Plus 4 version bits and a 1-bit instruction (2 hit actions).
     `set_nh`'s action data is 16 bits: `label` is never read, so it takes no space;
   - 16384 entries / 1024 partitions = 16 per partition; 1024 partitions = one way.
     Immediate action data: 37 + 4 + 1 + 16 = 58 bits, 2 to a 128-bit word: 8 RAMs deep -> 8.
     (An action data table instead: 42 bits, 3 to a word, 6 RAMs + 3 of action data = 9.)
   So the table takes 8 + 1 = 9 SRAM blocks and 4 TCAM blocks (pisa's plain-ATCAM sizing
   before this rule: 24 SRAM blocks and 2 TCAM blocks). */
// expect sram 9
// expect tcam 4
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_nh(bit<16> nh, bit<8> label) { meta.a16 = nh; }
    action miss() { meta.flag = true; }
    Alpm(number_partitions = 1024, subtrees_per_partition = 2,
         atcam_subset_width = 18, shift_granularity = 1) algo;
    table lpm {
        key = {
            meta.b8 : exact;
            hdr.ipv4.dst_addr : lpm;
        }
        actions = { set_nh; miss; }
        const default_action = miss();
        size = 16384;
        implementation = algo;
    }
    apply {
        lpm.apply();
    }
}

#include "../check/tail.p4inc"
