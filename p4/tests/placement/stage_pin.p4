/* `@stage(n)` starts a table in stage n (bf-p4c's stage pragma: "the associated match table
   must be placed in the indicated stage"; mau/table_placement.cpp
   `initial_stage_and_entries` takes the later of n and what the dependencies allow), and
   what depends on it moves later with it. `first` could go in stage 0 but is pinned to 3;
   `second` matches on what `first` writes (a match dependency): stage 4. `other`, free,
   stays in stage 0. The report says why `first` sits in stage 3. `@stage(1, 8, "immediate")`
   on `split_hint` starts it in stage 1; the 8 entries bf-p4c would put in that stage (the
   rest later) are not modelled, and a warning says so. */
// expect stage Ingress.first 3
// expect stage Ingress.second 4
// expect stage Ingress.other 0
// expect stage Ingress.split_hint 1
// expect placed Ingress.first: pinned by `@stage(3)`
// expect warning `@stage(1, 8)` on table `Ingress.split_hint`: pisa starts the table in stage 1 but does not place 8 entries there
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
    apply {
        split_hint.apply();
        first.apply();
        second.apply();
        other.apply();
    }
}

#include "../check/tail.p4inc"
