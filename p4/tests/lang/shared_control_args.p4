/* One control instance applied with different arguments is still one instance: one table
   `Ing.acl.t`, one set of entries, one direct counter. As p4c's inliner does, its parameters
   become temporaries: each apply copies its arguments in, runs the one table over them and
   copies `inout`/`out` back. Byte a picks the apply (1: header p1 and t1, else p2 and t2);
   the table is keyed on the `in` argument, `mark` writes the header's r and the tag. */
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

control Acl(in bit<8> k, inout p_t p, out bit<8> tag) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) stats;
    action mark(bit<8> v) {
        p.r = v;
        tag = 1;
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
            acl.apply(hdr.p1.k, hdr.p1, hdr.h.t1);
            ig_tm_md.ucast_egress_port = 1;
        } else {
            acl.apply(hdr.p2.k, hdr.p2, hdr.h.t2);
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
