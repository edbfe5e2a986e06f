/* bf-p4c DoInstructionSelection::postorder(IR::MAU::Primitive*): a conditional set with the action data on the false branch must be reversed. A negated condition counts with its branches swapped (p4c's strength reduction makes `!c ? a : b` of `c ? b : a` first), so `if (!flag) { f = v; }` is reversed too. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action mux(bool flag, bit<8> v) { hdr.ipv4.ttl = flag ? hdr.ipv4.ttl : v; }
    action branch(bool flag, bit<8> v) { if (flag) { } else { hdr.ipv4.protocol = v; } }
    action negated(bool flag, bit<8> v) { if (!flag) { hdr.ipv4.diffserv = v; } }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { mux; branch; negated; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
