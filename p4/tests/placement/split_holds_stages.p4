/* Tofino 1 has no long branches: a table split over stages advances through them on the
   next-table chain, so once its first part is placed bf-p4c starts no other table that is not
   mutually exclusive with it until its last part is placed
   (mau/table_placement.cpp `can_place_with_partly_placed`).
   - host_a (exact, 128K entries: 55 RAMs) goes first, in stage 0;
   - host_b (the same size, under `if (ttl != 0)`) takes the 25 RAMs stage 0 has left and
     the rest in stage 1;
   - tag, a keyless table placed after host_b's first part and not exclusive with it, fits
     stage 0's resources but waits for stage 1, beside host_b's last part;
   - other, in the else branch (mutually exclusive with host_b), may still use stage 0. */
// expect stage Ingress.host_a 0
// expect stage Ingress.host_b (part 1 of 2) 0
// expect stage Ingress.host_b (part 2 of 2) 1
// expect stage Ingress.tag 1
// expect stage Ingress.other 0
// expect placed Ingress.tag: stages 0..0 were held by a table split over them
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_a(bit<16> v) { meta.a16 = v; }
    action set_b(bit<8> v) { hdr.ipv4.diffserv = v; }
    action set_tag() { meta.b8 = 1; }
    action set_flag() { meta.flag = true; }
    table host_a {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { set_a; NoAction; }
        size = 131072;
    }
    table host_b {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_b; NoAction; }
        size = 131072;
    }
    table tag {
        actions = { set_tag; }
        default_action = set_tag();
    }
    table other {
        actions = { set_flag; }
        default_action = set_flag();
    }
    apply {
        host_a.apply();
        if (hdr.ipv4.ttl != 0) {
            host_b.apply();
        } else {
            other.apply();
        }
        tag.apply();
    }
}

#include "../check/tail.p4inc"
