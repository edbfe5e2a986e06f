/* `@pack` outside 1..9 and `@ways` outside 1..8: bf-p4c warns and ignores the value
   (mau/table_layout.cpp `get_pack_pragma_val`, mau/resource_estimate.cpp `ways_pragma`), so
   the table is sized as without them: 8192 entries of a 16-bit key, 19-bit entries
   (6 key + 4 version + 1 instruction + 8 immediate), 5 a row, 2 rows, raised to the 4-way
   minimum -> 4 SRAM blocks. */
// expect sram 4
// expect warning the pack value 10 on table `Ingress.wide` is not between 1 and 9, and will be ignored
// expect warning the ways value 0 on table `Ingress.wide` is not between 1 and 8, and will be ignored
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    @pack(10) @ways(0)
    table wide {
        key = { meta.a16 : exact; }
        actions = { set_ttl; NoAction; }
        size = 8192;
    }
    apply {
        wide.apply();
    }
}

#include "../check/tail.p4inc"
