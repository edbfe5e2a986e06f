/* Action code bf-p4c's DoInstructionSelection accepts, beside the forms it refuses
   (err/action_shift_variable_count, action_if_on_field, action_cond_set_reversed,
   action_saturating_wide): a shift by a constant, 32-bit saturating arithmetic, a conditional
   set with the action data on the true branch (`flag ? v : f`, and `if (flag) { f = v; }`,
   also with another field on the false side: `flag ? v : g`, `if (flag) { f = v; } else
   { f = g; }`; `!flag ? f : v`, which p4c's strength reduction makes `flag ? v : f`), min/max
   written as `?:`, and an `if` on a field in control code (a gateway);
   err/action_cond_set_too_complicated has the conditional sets it refuses. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action shift() { hdr.ipv4.ttl = hdr.ipv4.ttl << 2; }
    action sat() { hdr.ipv4.src_addr = hdr.ipv4.src_addr |+| 32w1; }
    action cset(bool flag, bit<8> v) { hdr.ipv4.ttl = flag ? v : hdr.ipv4.ttl; }
    action cset_if(bool flag, bit<8> v) { if (flag) { hdr.ipv4.protocol = v; } }
    action cset_other(bool flag, bit<8> v) { hdr.ipv4.ttl = flag ? v : hdr.ipv4.protocol; }
    action cset_if_else(bool flag, bit<8> v) {
        if (flag) { hdr.ipv4.ttl = v; } else { hdr.ipv4.ttl = hdr.ipv4.protocol; }
    }
    action cset_negated(bool flag, bit<8> v) { hdr.ipv4.diffserv = !flag ? hdr.ipv4.diffserv : v; }
    action mx() { hdr.ipv4.ttl = hdr.ipv4.ttl > hdr.ipv4.protocol ? hdr.ipv4.ttl : hdr.ipv4.protocol; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { shift; sat; cset; cset_if; cset_other; cset_if_else; cset_negated; mx; }
    }
    apply {
        t.apply();
        if (hdr.ipv4.ttl == 1) { hdr.ipv4.protocol = 2; }
    }
}

#include "../tail.p4inc"
