/* adjust_byte_count misuse that bf-p4c refuses: a run-time adjustment, two calls on one
   counter with different adjustments, an adjustment beyond the hardware's 14-bit field, and
   (tna.p4) a true_egress_accounting argument, which only Tofino 2's t2na.p4 has. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<4>>(16, CounterType_t.BYTES) runtime;
    Counter<bit<32>, bit<4>>(16, CounterType_t.BYTES) twice;
    Meter<bit<4>>(16, MeterType_t.BYTES) huge;
    Counter<bit<32>, bit<4>>(16, CounterType_t.BYTES, true) tofino1;
    apply {
        runtime.count(0, (bit<32>)hdr.ipv4.ihl);
        twice.count(0, 4);
        twice.count(1, 8);
        meta.b8 = huge.execute(0, 8193);
        meta.b8 = huge.execute(1, MeterColor_t.GREEN, 32w8193);
    }
}

#include "../tail.p4inc"
