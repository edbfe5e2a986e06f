/* Arguments that overlap: the instance's `out` parameter `tag` is bound to hdr.p1.r at one
   apply and hdr.h.t1 at the other, so it is a temporary; `hh` is hdr.h at both but overlaps
   hdr.h.t1, so it is one too (copied back in parameter order, `tag` then `hh`: hh's t1 wins,
   as P4's copy-out semantics and p4c's inliner give). Byte a picks the apply. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> t1;
    bit<8> t2;
}
header p_t {
    bit<8> k;
    bit<8> r;
}
struct headers_t { h_t h; p_t p1; p_t p2; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.p1);
        pkt.extract(hdr.p2);
        transition accept;
    }
}

control Acl(in bit<8> k, out bit<8> tag, inout h_t hh) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) stats;
    action mark(bit<8> v) {
        tag = 1;
        hh.t1 = v;
        stats.count();
    }
    action miss() {
        tag = 2;
        stats.count();
    }
    table t {
        key = { k : exact; }
        actions = { mark; miss; }
        const default_action = miss;
        counters = stats;
        size = 16;
    }
    apply { t.apply(); }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Acl() acl;
    apply {
        if (hdr.h.a == 1) {
            acl.apply(hdr.p1.k, hdr.p1.r, hdr.h);
            ig_tm_md.ucast_egress_port = 1;
        } else {
            acl.apply(hdr.p2.k, hdr.h.t1, hdr.h);
            ig_tm_md.ucast_egress_port = 2;
        }
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
