/* One control instance applied in two mutually exclusive places (the SDE switch program
   applies its ACL this way) is one instance: one table `Ing.acl.t` with one set of entries,
   one direct counter, one stage (P4_16 §10.3; bf-p4c keeps such a table as one table).
   Byte a selects the branch, byte b is the key; `mark` writes byte c. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
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

control Acl(inout headers_t hdr) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) stats;
    action mark(bit<8> v) {
        hdr.h.c = v;
        stats.count();
    }
    action miss() { stats.count(); }
    table t {
        key = { hdr.h.b : exact; }
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
            acl.apply(hdr);
            ig_tm_md.ucast_egress_port = 1;
        } else {
            acl.apply(hdr);
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
