/* bf-p4c DoInstructionSelection::postorder(IR::MAU::Primitive*): an action's if (a ?: after the midend's predication) must test action data, not a field. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action s() { if (hdr.ipv4.ttl == 1) { hdr.ipv4.protocol = 2; } }
    action m(bit<8> v) { hdr.ipv4.ttl = hdr.ipv4.protocol == 6 ? v : hdr.ipv4.ttl; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { s; m; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
