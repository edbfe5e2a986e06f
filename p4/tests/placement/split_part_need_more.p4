/* A part of a split table before its last one also takes what SRAM a stage has left and goes
   on in the next stage (bf-p4c's `need_more` split in mau/table_placement.cpp), as the last
   part already did: a part never waits for a stage with room for all of it. `big` (about 83
   RAMs, more than a stage's 80) is cut in parts of 42 and 41; stage 1 holds `filler` (54 RAMs,
   26 left). Its first part fills stage 1's 26 RAMs and puts its remaining 16 in stage 2; the
   last part follows in stage 3 (waiting for a stage with 42 RAMs free, the first part would
   have gone to stage 2 and the last to 3 only if stage 2 stayed empty).
   `filler2` (54 RAMs, after `filler`) can start in stage 2, but big is placed first (it can
   start in stage 1), and on Tofino 1 no other table starts while big is partly placed
   (split_holds_stages.p4): filler2 takes stage 3's 39 free RAMs and goes on in stage 4. */
// expect stage Ingress.big 3
// expect stage Ingress.filler 1
// expect stage Ingress.filler2 (part 1 of 2) 3
// expect stage Ingress.filler2 (part 2 of 2) 4
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    table first {
        key = { hdr.ipv4.protocol : exact; }
        actions = { set_b; NoAction; }
        size = 256;
    }
    table filler {
        key = { meta.b8 : exact; hdr.ipv4.src_addr : exact; }
        actions = { set_a; NoAction; }
        size = 135000;
    }
    action set_id(bit<16> v) { hdr.ipv4.identification = v; }
    table filler2 {
        key = { meta.a16 : exact; hdr.ipv4.src_addr : exact; }
        actions = { set_id; NoAction; }
        size = 110000;
    }
    table big {
        key = { meta.b8 : exact; hdr.ipv4.dst_addr : exact; }
        actions = { set_ttl; NoAction; }
        size = 240000;
    }
    apply {
        first.apply();
        filler.apply();
        filler2.apply();
        big.apply();
    }
}

#include "../check/tail.p4inc"
