/* A register pair of two 64-bit words on Tofino 1: bf-p4c's Tofino stateful ALU pairs at most
   64 bits (MaxDualSize; 128 on Tofino 2, where p4/tests/stf_tf2/salu_pair64 runs it). */
#include "../head.p4inc"

struct pair64_t {
    bit<64> lo;
    bit<64> hi;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<pair64_t, bit<8>>(16, {0, 0}) r;
    RegisterAction<pair64_t, bit<8>, bit<8>>(r) ra = {
        void apply(inout pair64_t v, out bit<8> rv) { v.lo = v.lo + 1; rv = 0; }
    };
    apply { meta.b8 = ra.execute(0); }
}

#include "../tail.p4inc"
