/* A stateful ALU has one math unit: two RegisterActions of one register using two different
   MathUnits is refused (bf-p4c does too), and so is a math unit reading a computed value. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(16) reg;
    MathUnit<bit<32>>(MathOp_t.MUL, 3) triple;
    MathUnit<bit<32>>(MathOp_t.DIV, 1000) inverse;
    RegisterAction<bit<32>, bit<8>, bit<32>>(reg) a = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = triple.execute(hdr.ipv4.src_addr);
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(reg) b = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = inverse.execute(hdr.ipv4.src_addr + hdr.ipv4.dst_addr);
            rv = value;
        }
    };
    apply {
        if (hdr.ipv4.ttl == 1) {
            hdr.ipv4.dst_addr = a.execute(hdr.ipv4.protocol);
        } else {
            hdr.ipv4.dst_addr = b.execute(hdr.ipv4.protocol);
        }
    }
}

#include "../tail.p4inc"
