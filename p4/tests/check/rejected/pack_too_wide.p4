// `@pack(9)` on a 128-bit exact key: an entry is 118 key bits (128 less 10 ghost) + 4 version
// + 1 instruction (+ 8 immediate), so 9 entries need ⌈9 × 123 / 128⌉ = 9 RAMs a row even with
// the action data in its own table, more than a match row's 8. bf-p4c tries only the packing
// `@pack` names (mau/table_layout.cpp `setup_exact_match`) and finds no layout.
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    @pack(9)
    table flows {
        key = {
            hdr.ethernet.dst_addr : exact;
            hdr.ethernet.src_addr : exact;
            hdr.ipv4.src_addr : exact;
        }
        actions = { set_ttl; NoAction; }
        size = 4096;
    }
    apply {
        flows.apply();
    }
}

#include "../tail.p4inc"
