/* bf-p4c DoInstructionSelection::postorder(IR::Shl/IR::Shr): the shift count of an action instruction must be a constant (a field or an action parameter is refused). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action by_field() { hdr.ipv4.ttl = hdr.ipv4.ttl << hdr.ipv4.protocol; }
    action by_param(bit<8> n) { hdr.ipv4.ttl = hdr.ipv4.ttl >> n; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { by_field; by_param; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
