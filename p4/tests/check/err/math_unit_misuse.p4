/* MathUnits configured or used wrongly: a shift outside −1..1, a table of 15 entries, a
   divisor of 0, and execute() outside a RegisterAction body (the unit belongs to the stateful
   ALU). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    MathUnit<bit<32>>(false, 2, 0,
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) bad_shift;
    MathUnit<bit<32>>(false, 0, 0,
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) short_table;
    MathUnit<bit<32>>(MathOp_t.MUL, 1, 0) by_zero;
    MathUnit<bit<32>>(MathOp_t.MUL, 3) triple;
    apply {
        hdr.ipv4.dst_addr = triple.execute(hdr.ipv4.src_addr);
    }
}

#include "../tail.p4inc"
