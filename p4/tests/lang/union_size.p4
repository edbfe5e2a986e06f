/* `minSizeInBits()` / `maxSizeInBits()` as p4c's `TypeMap::widthBits` computes them: a header
 * union is as wide as its widest member (24 bits here, not the members' 32 together), a header
 * with a `varbit<32>` field counts it as 0 bits at least and 32 at most. */
#include <core.p4>
#include <tna.p4>

header a_t { bit<8> x; }
header b_t { bit<16> y; bit<8> z; }
header_union u_t { a_t a; b_t b; }
header v_t { bit<8> len; varbit<32> data; }
header o_t {
    bit<8> u_min;
    bit<8> u_max;
    bit<8> u_min_bytes;
    bit<8> v_min;
    bit<8> v_max;
}
struct headers_t { o_t o; u_t u; v_t v; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.o);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.o.u_min = (bit<8>)hdr.u.minSizeInBits();
        hdr.o.u_max = (bit<8>)hdr.u.maxSizeInBits();
        hdr.o.u_min_bytes = (bit<8>)hdr.u.minSizeInBytes();
        hdr.o.v_min = (bit<8>)hdr.v.minSizeInBits();
        hdr.o.v_max = (bit<8>)hdr.v.maxSizeInBits();
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr.o); }
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
