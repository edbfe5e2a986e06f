/* `@use_hash_action(n)` as bf-p4c reads it (mau/table_layout.cpp `add_hash_action_option`,
   `can_be_hash_action`): 1 offers only the hash-action layout (no match RAMs: the key is the
   row address of the action data), 0 rules it out. Worked out by hand:
   - by_id: a 16-bit key, 65536 entries, one action with 16 bits of data -> a hash-action
     table: no match RAMs, 65536 x 16 bits of action data, 8 a word -> 8 RAMs;
   - by_id_off: the same table with `@use_hash_action(0)`: an exact layout instead: an entry
     is 16 - 10 ghost + 4 version + 16 immediate = 26 bits, 4 a RAM word, 16 RAMs deep
     (65536 / 4096 rows) -> 16 RAMs;
   - by_port: `@use_hash_action(1)` on a table with a direct counter, which pisa's own choice
     leaves out of the hash-action layout and bf-p4c allows (the counter is addressed by the
     hash): 65536 x 16 bits of action data -> 8 RAMs, plus the counter's 65536 packet counts,
     4 a word -> 16 RAMs (bf-p4c's spare bank not counted); 24 (without the annotation: 16 of
     exact match + 16 = 32).
   Ingress: 8 + 16 + 24 = 48 SRAM blocks. A table that cannot be a hash-action table under
   `@use_hash_action(1)` is refused: check/rejected/use_hash_action_unfit.p4. */
// expect sram 48
// expect no_warning use_hash_action
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) port_hits;
    action set_a(bit<16> v) { meta.a16 = v; }
    action set_total(bit<16> v) { hdr.ipv4.total_len = v; }
    action set_tci(bit<16> v) { hdr.vlan[0].tci = v; port_hits.count(); }
    table by_id {
        key = { hdr.ipv4.identification : exact; }
        actions = { set_a; }
        default_action = set_a(0);
        size = 65536;
    }
    @use_hash_action(0)
    table by_id_off {
        key = { hdr.ipv4.identification : exact; }
        actions = { set_total; }
        default_action = set_total(0);
        size = 65536;
    }
    @use_hash_action(1)
    table by_port {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { set_tci; }
        default_action = set_tci(0);
        size = 65536;
        counters = port_hits;
    }
    apply {
        by_id.apply();
        by_id_off.apply();
        by_port.apply();
    }
}

#include "../check/tail.p4inc"
