/* bf-p4c DoInstructionSelection::limitWidth: saturating |+| and |-| may not exceed the 32-bit PHV container. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action add() { hdr.ethernet.src_addr = hdr.ethernet.src_addr |+| 48w1; }
    action sub() { hdr.ethernet.dst_addr = hdr.ethernet.dst_addr |-| 48w1; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { add; sub; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
