/* TCAM blocks of a ternary table are counted by the PHV bytes of its key, as bf-p4c's
   estimate does (mau/table_layout.cpp `determine_byte_impacts`: "the input xbar allocates by
   container bytes, the estimate should also be based on container bytes rather than field
   bytes"; mau/resource_estimate.cpp `options_to_ternary_entries`: a row is one TCAM for up
   to 6 bytes, a pair for 11, a range field's bytes count twice). Worked out by hand:
   - mac_acl: a 48-bit MAC, 6 bytes -> 1 TCAM a row (by bits, 48 / 44 -> 2); 512 entries,
     1 row: 1 TCAM block;
   - flow_acl: 32 + 32 + 8 bits = 9 bytes -> 2 TCAMs a row (by bits: 72 / 44 -> 2);
     1024 entries, 2 rows: 4 blocks;
   - port_range: ether_type as a range, 2 bytes counted twice + ttl 1 byte = 5 bytes -> 1
     TCAM a row; 512 entries, of which a quarter (128) hold a range of 2 * 4 nibbles - 1 = 7
     TCAM lines (mau/resource_estimate.cpp `RangeEntries`): 128 * 7 + 384 = 1280 lines, 3
     rows: 3 blocks.
   Total 8 TCAM blocks (9 counted by bits). */
// expect tcam 8
// expect stage_tcam 0 8
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action drop() { ig_dprsr_md.drop_ctl = 1; }
    action mark(bit<8> v) { meta.b8 = v; }
    action tag(bit<16> v) { meta.a16 = v; }
    table mac_acl {
        key = { hdr.ethernet.src_addr : ternary; }
        actions = { drop; NoAction; }
        size = 512;
    }
    table flow_acl {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
        }
        actions = { mark; NoAction; }
        size = 1024;
    }
    table port_range {
        key = {
            hdr.ethernet.ether_type : range;
            hdr.ipv4.ttl : ternary;
        }
        actions = { tag; NoAction; }
        size = 512;
    }
    apply {
        mac_acl.apply();
        flow_acl.apply();
        port_range.apply();
    }
}

#include "../check/tail.p4inc"
