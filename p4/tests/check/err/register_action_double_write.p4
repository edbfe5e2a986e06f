/* A RegisterAction that writes its value twice on one path (the wrap-around counter written as
 * two statements): bf-p4c's stateful ALU computes each word once per predicate, so it refuses
 * two assignments that are not mutually exclusive. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<8>>(256, 0) seq;
    RegisterAction<bit<16>, bit<8>, bit<16>>(seq) next_seq = {
        void apply(inout bit<16> value, out bit<16> rv) {
            value = value + 1;
            if (value == 1000) {
                value = 0;
            }
            rv = value;
        }
    };
    apply {
        meta.a16 = next_seq.execute(hdr.ipv4.ttl);
    }
}

#include "../tail.p4inc"
