/* How many RAMs deep bf-p4c makes an exact table once it picks hash ways
   (mau/resource_estimate.cpp `calculate_way_sizes`, `can_be_identity_hash`; hash-action
   tables: mau/table_layout.cpp `can_be_hash_action`), worked out by hand:
   - small: 256 entries of a 16-bit key need one RAM row, but a hashed (cuckoo) table gets at
     least 4 RAMs, one per way; addressing rows by the key itself would need 2^6 / 5 entries a
     word -> 16 RAMs, more than 4: 4 RAMs (entry 6 + 4 version + 1 instruction + 8 immediate
     bits, one RAM wide);
   - narrow: an 8-bit key is shorter than a RAM's 10-bit row address: one RAM;
   - hash_action: 65536 entries of a 16-bit key, one action (also the default, so the table has
     no NoAction as a second one): the key is the row address, no
     match RAMs, only the action data: 65536 x 16 bits, 8 a word -> 8 RAMs (as a hashed table
     it would take 16).
   Total 4 + 1 + 8 = 13 SRAM blocks (pisa before this rule: 1 + 1 + 16). */
// expect sram 13
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    table small {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    table narrow {
        key = { meta.b8 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    table hash_action {
        key = { hdr.ipv4.dst_addr[15:0] : exact; }
        actions = { set_a; }
        default_action = set_a(0);
        size = 65536;
    }
    apply {
        small.apply();
        narrow.apply();
        hash_action.apply();
    }
}

#include "../check/tail.p4inc"
