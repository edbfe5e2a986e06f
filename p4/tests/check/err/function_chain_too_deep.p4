/* 34 distinct functions each calling the next: not recursion, but deeper than the 32 nested
   calls pisa inlines; the error says so (it used to call it recursion). */
#include "../head.p4inc"

#define F(n, m) bit<8> f##n(in bit<8> x) { return f##m(x) + 1; }
bit<8> f34(in bit<8> x) { return x; }
F(33, 34) F(32, 33) F(31, 32) F(30, 31) F(29, 30) F(28, 29) F(27, 28) F(26, 27) F(25, 26)
F(24, 25) F(23, 24) F(22, 23) F(21, 22) F(20, 21) F(19, 20) F(18, 19) F(17, 18) F(16, 17)
F(15, 16) F(14, 15) F(13, 14) F(12, 13) F(11, 12) F(10, 11) F(9, 10) F(8, 9) F(7, 8)
F(6, 7) F(5, 6) F(4, 5) F(3, 4) F(2, 3) F(1, 2) F(0, 1)

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.ipv4.ttl = f0(hdr.ipv4.ttl);
    }
}

#include "../tail.p4inc"
