/* `predicate`, a method of the stateful ALU inside a RegisterAction's `apply`, called from
 * outside it: refused with where it belongs. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<16>>(16) r;
    RegisterAction<bit<32>, bit<16>, bit<4>>(r) ra = {
        void apply(inout bit<32> value) { value = value + 1; }
    };
    apply {
        meta.b8 = (bit<8>) ra.predicate();
    }
}

#include "../tail.p4inc"
