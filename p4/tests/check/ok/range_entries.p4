/* A range table's TCAM lines, as bf-p4c counts them (mau/resource_estimate.cpp RangeEntries):
 * a 16-bit range key covers 4 PHV nibbles, so a range entry may take 2 * 4 - 1 = 7 TCAM lines.
 * With @entries_with_ranges(64), 64 entries take 7 lines and the other 4032 one: 4480 lines,
 * 9 rows of two TCAMs (the key's 4 range bytes count twice, 8 bytes in all) = 18, one stage.
 * Without the annotation a quarter of the 4096 entries hold ranges: 10240 lines, 20 rows, 40
 * TCAMs: more than a Tofino 1 stage's 24 (tests/check.rs compiles it both ways). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.b8 = v; }
    @entries_with_ranges(64)
    table acl {
        key = {
            hdr.ipv4.src_addr   : ternary;
            hdr.ipv4.total_len  : range;
        }
        actions = { set; NoAction; }
        default_action = NoAction;
        size = 4096;
    }
    apply { acl.apply(); }
}

#include "../tail.p4inc"
