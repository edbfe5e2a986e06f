/* SRAM of ternary tables as bf-p4c lays them out (mau/table_layout.cpp
   `setup_ternary_layout_options`, mau/resource_estimate.cpp `TernaryIndirectPerWord` and
   `calculate_attached_rams`), worked out by hand:
   - acl: 2048 entries of a 32-bit ternary key: 4 TCAM rows of one block. Each slot's result is
     a 2-bit instruction (3 hit actions) + `set_a`'s 16 bits of immediate data = 18 bits,
     padded to 32: 4 a word, 2048 / 4096 -> 1 RAM of ternary indirection, no action data
     table (with one: 2-bit results 16 a word = 1 RAM + 2048 x 16 bits 8 a word = 1 RAM: 2);
   - wide: `set_both`'s 64 bits of data are too wide to ride immediate (32 at most): a 1-bit
     instruction, padded to 8, 16 a word -> 1 RAM of ternary indirection, + an action data
     table of 2048 x 64 bits, 2 a word -> 1 RAM. Its 8-bit key: 4 TCAM blocks.
   Total 1 + 2 = 3 SRAM blocks (pisa before this rule: 2 + 2), 8 TCAM blocks. */
// expect sram 3
// expect tcam 8
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_a(bit<16> v) { meta.a16 = v; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    action set_both(bit<32> x, bit<32> y) {
        hdr.ipv4.src_addr = x;
        hdr.ipv4.dst_addr = y;
    }
    table acl {
        key = { hdr.ipv4.dst_addr : ternary; }
        actions = { set_a; set_ttl; NoAction; }
        size = 2048;
    }
    table wide {
        key = { hdr.ipv4.ttl : ternary; }
        actions = { set_both; NoAction; }
        size = 2048;
    }
    apply {
        acl.apply();
        wide.apply();
    }
}

#include "../check/tail.p4inc"
