/* `{#}` (the invalid header, P4_16 1.2.2) is a header or header union value: assigned to or
 * compared with a number it is refused with the reason, and used elsewhere in an expression
 * it is refused as not modelled (issue 11, lang 4). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.ethernet = {#};
        meta.b8 = {#};
        if (meta.a16 == {#}) { meta.a16 = 1; }
        meta.flag = hdr.ipv4 == {#};
        meta.a16 = {#} ++ meta.a16;
    }
}

#include "../tail.p4inc"
