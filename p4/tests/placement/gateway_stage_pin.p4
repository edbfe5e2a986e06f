/* A gateway takes the `@stage` of the tables it guards: bf-p4c's `get_provided_stage` (ir/mau.cpp)
   gives a gateway-only table the lowest `@stage` of the tables first in its next-table
   sequences, skipping tables that depend on an earlier one of their sequence, and none when one
   of those tables has no `@stage`; the gateway then starts no earlier than that stage, like a
   pinned table.
   - The first `if` guards `a` (`@stage(3)`) and, on its else branch, `b` (`@stage(5)`): it is
     pinned to stage 3 and sits there with `a`.
   - The second `if` guards `c` (`@stage(4)`) and `d`, which matches on what `c` writes (so `d`
     is skipped): pinned to stage 4.
   - The third `if` guards `e` (`@stage(2)`) and `f` (no `@stage`, independent): not pinned,
     stage 0. */
// expect stage Ingress.a 3
// expect stage Ingress.b 5
// expect stage Ingress.c 4
// expect stage Ingress.d 5
// expect stage Ingress.e 2
// expect stage Ingress.f 0
// expect placed if (hdr.ipv4.ttl == 1): pinned by the `@stage(3)` of the tables it guards
// expect placed if (hdr.ipv4.protocol == 6): pinned by the `@stage(4)` of the tables it guards
// expect no_warning could not be placed
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    @stage(3) table a { key = { hdr.ethernet.dst_addr : exact; } actions = { NoAction; } size = 16; }
    @stage(5) table b { key = { hdr.ethernet.src_addr : exact; } actions = { NoAction; } size = 16; }
    @stage(4) table c { key = { hdr.ipv4.src_addr : exact; } actions = { set_b; NoAction; } size = 16; }
    table d { key = { meta.b8 : exact; } actions = { NoAction; } size = 16; }
    @stage(2) table e { key = { hdr.ipv4.dst_addr : exact; } actions = { NoAction; } size = 16; }
    table f { key = { hdr.ethernet.ether_type : exact; } actions = { NoAction; } size = 16; }
    apply {
        if (hdr.ipv4.ttl == 1) { a.apply(); } else { b.apply(); }
        if (hdr.ipv4.protocol == 6) { c.apply(); d.apply(); }
        if (hdr.ipv4.diffserv == 2) { e.apply(); f.apply(); }
    }
}

#include "../check/tail.p4inc"
