/* `@pack(n)` and `@ways(n)` on exact tables, as bf-p4c reads them: `@pack(n)` makes n entries
   a match row the only layout tried (mau/table_layout.cpp `get_pack_pragma_val`,
   `setup_exact_match`); `@ways(n)` cuts the RAMs into n hash ways, way i taking
   ⌈rows still needed / ways left⌉ RAMs rounded up to a power of two, at least 1
   (mau/resource_estimate.cpp `ways_provided`), instead of the default minimum of 4 RAMs.
   Each table: 8192 entries of a 16-bit key, an entry 6 key bits (16 less 10 ghost) + 4 version
   + 1 instruction + 8 immediate = 19 bits (with the data in an action data table instead:
   11 bits, plus 8192 x 8 bits at 16 a word; never cheaper here). Worked out by hand:
   - packed1, `@pack(1)`: 1 entry a row, 8 rows deep -> 8 RAMs (without it: 5 a row, 2 rows,
     raised to the 4-way minimum -> 4);
   - ways2, `@ways(2)`: cheapest is 4 entries a row (76 bits, 1 RAM wide), 2 rows: ways of
     ⌈2/2⌉ = 1 and 1 RAM -> 2 RAMs (without it: 4);
   - both, `@pack(3) @ways(3)`: 3 a row (57 bits, 1 RAM), ⌈8192/3072⌉ = 3 rows: ways 1, 1, 1
     -> 3 RAMs (without them: 4).
   Total 8 + 2 + 3 = 13 SRAM blocks (12 when the annotations were ignored). */
// expect sram 13
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    @pack(1)
    table packed1 {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    @ways(2)
    table ways2 {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    @pack(3) @ways(3)
    table both {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    apply {
        packed1.apply();
        ways2.apply();
        both.apply();
    }
}

#include "../check/tail.p4inc"
