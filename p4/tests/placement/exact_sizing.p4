/* An exact-match table sized as bf-p4c lays it out (mau/table_layout.cpp `setup_match_layout`
   and `setup_exact_match`, mau/resource_estimate.cpp `options_to_ways` and
   `calculate_attached_rams`), worked out by hand:
   - key: vrf 8 bits + IPv4 address 32 bits = 40 bits; 10 of them are ghost bits (the hash
     that picks the RAM row stands for them), so an entry stores 30;
   - overhead: a 1-bit instruction (2 hit actions), plus `set_nh`'s action data when it rides
     immediate: 16 bits (`label` is never read, so it takes no space); 4 version bits;
   - immediate: 30 + 4 + 1 + 16 = 51 bits an entry. Packing 5 entries a row: 255 bits -> 2 RAMs
     wide (85 overhead bits fit 2 x 64; 5 entries fit 1 RAM's 5), 65536 / 5120 -> 13 rows of
     RAMs deep: 26 RAMs. Every other packing costs more (2 a row: 32; 7 a row: 3 wide x 10
     = 30; with an action data table: 7 a row, 2 wide x 10 = 20 + 9 RAMs of action data = 29).
   pisa's sizing before this rule: 48 RAMs (2 entries a word and a 32-bit action data table). */
// expect sram 26
// expect tcam 0
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_nh(bit<16> nh, bit<8> label) { meta.a16 = nh; }
    action miss() { meta.flag = true; }
    table host {
        key = {
            meta.b8 : exact;
            hdr.ipv4.dst_addr : exact;
        }
        actions = { set_nh; miss; }
        default_action = miss();
        size = 65536;
    }
    apply {
        host.apply();
    }
}

#include "../check/tail.p4inc"
