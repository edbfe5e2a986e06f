/* bf-p4c DoInstructionSelection::postorder(IR::MAU::Primitive*): after p4c's Predication an
   `if` in an action is `dst = c ? a : b`, and its condition must be an action data parameter
   itself (`mux->e0` an `ActionArg`, the `conditionally-set`'s condition bit): a comparison of
   a parameter with a constant (`if (p == 5)`, `p != 0`, `p > 3 ? v : f`) is refused with "Conditions in an action must be simple comparisons of an action data
   parameter", even with the action data on the true side (ok/action_alu_accepted has the
   `if (flag)` and min/max forms it accepts). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action eq(bit<8> p, bit<8> v) { if (p == 5) { hdr.ipv4.ttl = v; } }
    action ne(bit<8> p, bit<8> v) { if (p != 0) { hdr.ipv4.ttl = v; } }
    action gt(bit<8> p, bit<8> v) { hdr.ipv4.ttl = p > 3 ? v : hdr.ipv4.ttl; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { eq; ne; gt; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
