/* The byte limit of an exact-match row (mau/table_layout.cpp `setup_exact_match`: a RAM compares
   at most 16 bytes), worked out by hand: the key is four 9-bit slices, 36 bits but 8 PHV bytes
   (each slice spans two bytes); one byte is ghosted with the 10 ghost bits: 7 bytes and
   36 - 10 = 26 bits an entry, + 4 version bits, a 1-bit instruction and 8 bits of immediate
   data = 39 bits. 3 entries a row would fit one RAM by bits (117 of 128) but need 21 bytes:
   2 RAMs, 4 rows deep -> 8. 2 entries a row: 78 bits, 14 bytes, one RAM, 12288 / 2048 = 6 rows
   deep -> 6 RAMs, the cheapest (without the byte limit: 3 a row in one RAM, 4 deep -> 4). */
// expect sram 6
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    table spread {
        key = {
            hdr.ipv4.src_addr[8:0] : exact;
            hdr.ipv4.src_addr[24:16] : exact;
            hdr.ipv4.dst_addr[8:0] : exact;
            hdr.ipv4.dst_addr[24:16] : exact;
        }
        actions = { set_ttl; NoAction; }
        size = 12288;
    }
    apply {
        spread.apply();
    }
}

#include "../check/tail.p4inc"
