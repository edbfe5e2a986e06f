/* `type` new types with casts, as p4c accepts them (P4_16 "Introducing new types"): a cast
   converts between a new type and its underlying type either way, a `typedef` of a new type
   is that same type, and values of one new type compare with `==` (issue 11, lang 3; what is
   refused without the casts is in tests/check/err/newtype_mixing.p4). */
#include <core.p4>
#include <tna.p4>
type bit<8> Tag_t;
typedef Tag_t TagAlias_t;
header h_t { Tag_t t; bit<8> raw; bit<8> out1; bit<8> out2; }
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
    apply {
        ig_tm_md.ucast_egress_port = 1;
        Tag_t x = (Tag_t) (hdr.h.raw + 1);
        TagAlias_t y = x;
        if (y == hdr.h.t) {
            hdr.h.out1 = 1;
        } else {
            hdr.h.out1 = 2;
        }
        hdr.h.out2 = (bit<8>) hdr.h.t + 8w0x10;
        hdr.h.t = y;
    }
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
control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
