/* Extern uses pisa does not model are errors, not silently ignored: a SelectorAction run
 * without an index (at the member the selector's own lookup chose). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    ActionProfile(16) ap;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) h;
    ActionSelector(ap, h, SelectorMode_t.FAIR, 4, 8) sel;
    SelectorAction(sel) sa = {
        void apply(inout bit<1> value) {
            value = 0;
        }
    };
    apply { sa.execute(); }
}

#include "../tail.p4inc"
