/* A table's `hit`/`miss` kept in a variable, outside any condition (P4_16 "Invoking tables";
   p4c's TableHit turns the assignment into an `if`): `h` is whether `t` hit, `m` whether `u`
   missed, both read after the applies. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
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

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    table t {
        key = { hdr.h.a : exact; }
        actions = { NoAction; }
        const entries = { 0x01 : NoAction(); 0x03 : NoAction(); }
        size = 16;
    }
    table u {
        key = { hdr.h.a : exact; }
        actions = { NoAction; }
        const entries = { 0x02 : NoAction(); 0x03 : NoAction(); }
        size = 16;
    }
    apply {
        bool h = t.apply().hit;
        bool miss_u;
        miss_u = u.apply().miss;
        if (h) {
            hdr.h.b = 0x11;
        }
        if (miss_u) {
            hdr.h.c = 0x22;
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
