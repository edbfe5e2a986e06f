/* bf-p4c DoInstructionSelection::postorder(IR::MAU::Primitive*): a conditional assignment in
   an action (an `if` on action data after p4c's Predication makes `dst = c ? a : b` of it, or
   a `?:` written so) is one `conditionally-set` only with action data on the true side and a
   field on the false one; two action-data values, two fields, an expression or a nested `if`
   is "too complicated to support in a single operation". */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action two_values(bool flag, bit<8> a, bit<8> b) { hdr.ipv4.ttl = flag ? a : b; }
    action if_else_values(bool flag, bit<8> a, bit<8> b) {
        if (flag) { hdr.ipv4.ttl = a; } else { hdr.ipv4.ttl = b; }
    }
    action copy_field(bool flag) { if (flag) { hdr.ipv4.ttl = hdr.ipv4.protocol; } }
    action expression(bool flag) { if (flag) { hdr.ipv4.ttl = hdr.ipv4.ttl - 1; } }
    action nested(bool f, bool g, bit<8> v) { if (f) { if (g) { hdr.ipv4.ttl = v; } } }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { two_values; if_else_values; copy_field; expression; nested; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
