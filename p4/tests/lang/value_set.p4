/* Parser value sets: select labels the control plane fills at run time. `tags` (bit<8>) labels
   a case of its own, `pairs` (a struct) stands for a whole tuple of keys, and `lows` labels one
   element of a tuple. Each parsed extra header gets a mark in the control; the entries come
   from value_set.tables.yaml. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
header x_t { bit<8> v; }
struct pair_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t {
    h_t h;
    x_t x;
    x_t y;
    x_t z;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    value_set<bit<8>>(4) tags;
    value_set<pair_t>(2) pairs;
    value_set<bit<8>>(2) lows;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            tags: parse_x;
            default: pair;
        }
    }
    state pair {
        transition select(hdr.h.a, hdr.h.b) {
            pairs: parse_y;
            (0x77, lows): parse_z;
            default: accept;
        }
    }
    state parse_x { pkt.extract(hdr.x); transition accept; }
    state parse_y { pkt.extract(hdr.y); transition accept; }
    state parse_z { pkt.extract(hdr.z); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.x.isValid()) { hdr.x.v = 0x11; }
        if (hdr.y.isValid()) { hdr.y.v = 0x22; }
        if (hdr.z.isValid()) { hdr.z.v = 0x33; }
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
