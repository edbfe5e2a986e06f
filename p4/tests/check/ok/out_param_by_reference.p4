/* pisa binds `out` parameters to their argument's storage (no copy). Where that differs from
 * P4's copy semantics (an `out` parameter starts uninitialized, its headers invalid) it warns:
 * `Pick` leaves `v` unwritten when `t` differs (the argument keeps its value; p4c copies an
 * unspecified one back), `Bump` reads `v` first (the argument's value; p4c: unspecified), and
 * `Fresh` gets the same header as `in` and `out` (its `in` sees the header invalid). `Both`
 * writes `v` in every action of its table and `Drop` gets `_`: no warning for them. The
 * action `mark`, called directly, leaves its `out` unwritten when `t` differs: warned too. */
#include "../head.p4inc"

control Pick(in bit<16> t, out bit<8> v) {
    apply {
        if (t == 0x0800) { v = 1; }
    }
}

control Bump(out bit<8> v) {
    apply { v = v + 1; }
}

control Both(in bit<16> t, out bit<8> v) {
    action one() { v = 1; }
    action two() { v = 2; }
    table pick {
        key = { t : exact; }
        actions = { one; two; }
        default_action = two;
    }
    apply { pick.apply(); }
}

control Drop(in bit<16> t, out bit<8> v) {
    apply {
        if (t == 1) { v = 3; }
    }
}

control Fresh(in vlan_h a, out vlan_h b) {
    apply {
        if (a.isValid()) {
            b.setValid();
            b.tci = a.tci;
        }
    }
}

action mark(in bit<16> t, out bit<16> v) {
    if (t == 0x86dd) { v = 6; }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Pick() pick;
    Bump() bump;
    Both() both;
    Drop() drop;
    Fresh() fresh;
    apply {
        pick.apply(hdr.ethernet.ether_type, meta.b8);
        bump.apply(meta.b8);
        both.apply(hdr.ethernet.ether_type, meta.b8);
        drop.apply(hdr.ethernet.ether_type, _);
        fresh.apply(hdr.vlan[0], hdr.vlan[0]);
        mark(hdr.ethernet.ether_type, meta.a16);
    }
}

#include "../tail.p4inc"
