/* `return;` in the apply block of a nested control ends that control only, as p4c's
   RemoveReturns makes it (a flag guards what follows) before bf-p4c inlines it: `Clamp` is
   applied twice; its first return skips the rest of `Clamp`, its second (after it counted)
   skips the increment; the applying control goes on after each (`e` is set to 0xee). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
}
struct headers_t { h_t h; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Clamp(inout bit<8> v, inout bit<8> seen) {
    apply {
        if (v > 100) {
            v = 100;
            return;
        }
        seen = seen + 1;
        if (v == 7) {
            return;
        }
        v = v + 1;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Clamp() first;
    Clamp() second;
    apply {
        first.apply(hdr.h.a, hdr.h.c);
        second.apply(hdr.h.b, hdr.h.d);
        hdr.h.e = 0xee;
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
