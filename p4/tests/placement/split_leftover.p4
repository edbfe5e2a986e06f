/* A table that needs more SRAM than a stage has left takes what is left and goes on in the next
   stage, as bf-p4c's table placement splits a table whose entries do not all fit a stage
   (`need_more` in mau/table_placement.cpp); its result is in its last part.
   - host_b (exact, 128K entries: 55 of the stage's 80 RAMs in pisa's sizing) goes first, whole
     in stage 0: both big tables could start there, and host_b has the longer dependency chain
     below it (after_b), which bf-p4c's `is_better` prefers (see critical_first.p4);
   - host_a (the same size, independent) takes the 25 RAMs stage 0 has left and its other 30
     in stage 1 (without the split it would sit whole in stage 1);
   - after_b matches on what host_b writes: stage 1. */
// expect stage Ingress.host_b 0
// expect stage Ingress.host_a (part 1 of 2) 0
// expect stage Ingress.host_a (part 2 of 2) 1
// expect stage Ingress.after_b 1
// expect placed Ingress.after_b: after Ingress.host_b (match dependency on `meta.b8`)
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_a(bit<16> v) { meta.a16 = v; }
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
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
    table after_b {
        key = { meta.b8 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    apply {
        host_a.apply();
        host_b.apply();
        after_b.apply();
    }
}

#include "../check/tail.p4inc"
