/* Calls of functions with side effects inside `&&`, `||` and `?:` (P4_16 "Operations on
   Boolean expressions", "Conditional operator", "Expression evaluation order"): the right
   operand of `&&`/`||` runs only when the left one does not decide, and only the selected arm of
   `?:` runs; when it runs, it runs after the left operand, which is not evaluated again (step 5:
   the right operand writes what the left one read). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> k;
    bit<8> r0;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
    bit<8> r9;
    bit<8> r10;
}
struct headers_t { h_t h; }
struct meta_t {}

bool setb(inout bit<8> x, in bit<8> v, in bool ret) {
    x = v;
    return ret;
}
bit<8> inc(inout bit<8> x) {
    x = x + 1;
    return x;
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (setb(hdr.h.r0, 1, hdr.h.k == 1) && setb(hdr.h.r1, 1, true)) {
            hdr.h.r5 = 0xee;
        }
        if (setb(hdr.h.r2, 2, hdr.h.k == 1) || setb(hdr.h.r3, 2, true)) {
            hdr.h.r6 = 0x44;
        }
        hdr.h.r4 = (hdr.h.k == 1) ? inc(hdr.h.r10) : 8w0x77;
        hdr.h.r7 = (hdr.h.k == 1) ? 8w0x55 : inc(hdr.h.r7);
        if (hdr.h.r8 == 0 && setb(hdr.h.r8, 9, true)) {
            hdr.h.r9 = 0x99;
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
