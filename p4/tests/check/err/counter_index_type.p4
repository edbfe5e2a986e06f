/* Extern method arguments take the type arguments of the instance (here I = bit<8>). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS) c;
    apply {
        c.count(meta.a16);
    }
}

#include "../tail.p4inc"
