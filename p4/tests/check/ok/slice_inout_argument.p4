/* Bit slices passed to a control's `inout` parameters: copied into temporaries before the
   inlined apply and back into the slices after it, as p4c's copy-in/copy-out does, so two
   slices of one field swap. */
#include "../head.p4inc"

control Swap(inout bit<16> x, inout bit<16> y) {
    apply {
        bit<16> t = x;
        x = y;
        y = t;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Swap() swap;
    apply {
        swap.apply(hdr.ipv4.src_addr[31:16], hdr.ipv4.src_addr[15:0]);
    }
}

#include "../tail.p4inc"
