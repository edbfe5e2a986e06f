/* `@simul_lookups(n)` and the `@pragma name args` form, as bf-p4c reads them. `@simul_lookups(n)`
   cuts an exact table's RAMs into n simultaneous lookups as `@ways(n)` does (their lookups may
   share hash bits; mau/table_layout.cpp `simul_lookups_pragma`, `ways_provided`), 1 to 10
   (out of range: warned and ignored). `@pragma stage 1` is `@stage(1)` and `@pragma ways 2` is
   `@ways(2)` (p4c's grammar: `PRAGMA annotationName annotationBody END_PRAGMA`).
   Each table: 8192 entries of a 16-bit key, as in pack_ways.p4: 2 RAMs with 2 ways or
   lookups, 4 by default. lookups2 2 + pragma_ways 2 + too_many 4 + pinned 4 = 12 SRAM blocks
   (16 when the annotations were ignored, and pinned, which depends on no table, in stage 0). */
// expect sram 12
// expect stage Ingress.pinned 1
// expect warning the simul_lookups value 11 on table `Ingress.too_many` is not between 1 and 10, and will be ignored
// expect no_warning annotation `@pragma`
// expect no_warning annotation `@simul_lookups`
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    action set_proto(bit<8> v) { hdr.ipv4.protocol = v; }
    @simul_lookups(2)
    table lookups2 {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    @pragma ways 2
    table pragma_ways {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    @simul_lookups(11)
    table too_many {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    @pragma stage 1
    table pinned {
        key = { meta.a16 : exact; }
        actions = { set_proto; NoAction; }
        size = 8192;
    }
    apply {
        lookups2.apply();
        pragma_ways.apply();
        too_many.apply();
        pinned.apply();
    }
}

#include "../check/tail.p4inc"
