/* `@pa_alias(gress, a, b)`: bf-p4c puts the two fields in one container, so they are one
   field. `m.x` and `m.y` alias: `hdr.h.b` reads through `m.y` what was written through `m.x`,
   and the copy `m.y = m.x` is a no-op that disappears (the golden IR has no statement for
   it). `m.port` aliases the intrinsic `ucast_egress_port`, which keeps its storage: writing
   `m.port` picks the egress port. Of fields of different widths the narrower becomes the
   wider's low bits (`m.x` is `m.wide[7:0]`), as bf-p4c aliases them. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}
struct headers_t { h_t h; }
struct meta_t {
    bit<8>  x;
    bit<8>  y;
    bit<9>  port;
    bit<16> wide;
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

@pa_alias("ingress", "m.x", "m.y")
@pa_alias("ingress", "m.port", "ig_tm_md.ucast_egress_port")
@pa_alias("ingress", "m.x", "m.wide")
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        m.x = hdr.h.a;
        m.y = m.x;
        hdr.h.b = m.y;
        m.port = 1;
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
