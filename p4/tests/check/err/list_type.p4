/* `list<T>` (P4_16 1.2.3, the type of list expressions) is refused with the reason, not as an
 * unknown name: TNA declares no extern that takes one and whether bf-p4c compiles such values
 * is not established (issue 11, lang 4). A list written where it is used still works. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        list<bit<8>> l = { 8w1, 8w2 };
    }
}

#include "../tail.p4inc"
