/* `@stage(n)` starts a table in stage n (bf-p4c's stage pragma: "the associated match table
   must be placed in the indicated stage"; mau/table_placement.cpp
   `initial_stage_and_entries` takes the later of n and what the dependencies allow), and
   what depends on it moves later with it. `first` could go in stage 0 but is pinned to 3;
   `second` matches on what `first` writes (a match dependency): stage 4. `other`, free,
   stays in stage 0. The report says why `first` sits in stage 3. `@stage(1, 8, "immediate")`
   on `split_hint` (64 entries) puts 8 of its entries in stage 1 and the rest, with its result,
   in stage 2 (bf-p4c's `requested_stage_entries`, then `need_more`): one logical table in each.
   Two `@stage`s with entries on `two_pins` are not modelled: it starts in the lower stage, 5,
   and a warning says so. */
// expect stage Ingress.first 3
// expect stage Ingress.second 4
// expect stage Ingress.other 0
// expect stage Ingress.split_hint 2
// expect stage_logical 1 1
// expect stage_logical 2 1
// expect stage Ingress.two_pins 5
// expect placed Ingress.first: pinned by `@stage(3)`
// expect placed Ingress.split_hint: pinned by `@stage(1)`
// expect placed Ingress.split_hint: the rest of its entries, after the part pinned by `@stage(1)`
// expect no_warning `Ingress.split_hint`
// expect warning `@stage(5, 8)` on table `Ingress.two_pins`: pisa starts the table in stage 5 but does not place 8 entries there
// expect placed Ingress.second: after Ingress.first (match dependency
// expect no_warning ignored
// expect no_warning could not be placed
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    @stage(3)
    table first {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_b; NoAction; }
        size = 256;
    }
    table second {
        key = { meta.b8 : exact; }
        actions = { set_a; NoAction; }
        size = 256;
    }
    table other {
        key = { hdr.ipv4.ttl : exact; }
        actions = { NoAction; }
        size = 16;
    }
    @stage(1, 8, "immediate")
    table split_hint {
        key = { hdr.ipv4.protocol : exact; }
        actions = { NoAction; }
        size = 64;
    }
    @stage(5, 8)
    @stage(6)
    table two_pins {
        key = { hdr.ipv4.diffserv : exact; }
        actions = { NoAction; }
        size = 64;
    }
    apply {
        two_pins.apply();
        split_hint.apply();
        first.apply();
        second.apply();
        other.apply();
    }
}

#include "../check/tail.p4inc"
