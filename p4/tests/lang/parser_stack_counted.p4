/* After a state whose header stack index is counted at run time (the paths into it bring
   different counts), the states after it keep counting at run time: a constant index there
   would overwrite what the paths filled. `a1` takes s[0], `a2` s[0] and s[1]; `m` is reached
   with 1 or 2 elements filled (run time), and so is `t` after it (2 or 3), never a constant.
   The ingress control reports s[0..3] valid in bits 0..3 of `r.v`. */
#include <core.p4>
#include <tna.p4>

header eth_h {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header byte_h {
    bit<8> v;
}
struct headers_t {
    eth_h eth;
    byte_h r;
    byte_h[4] s;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.r);
        transition select(hdr.r.v) {
            1: a1;
            2: a2;
            default: accept;
        }
    }
    state a1 { pkt.extract(hdr.s.next); transition m; }
    state a2 { pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition m; }
    state m { pkt.extract(hdr.s.next); transition t; }
    state t { pkt.extract(hdr.s.next); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        bit<8> v = 0;
        if (hdr.s[0].isValid()) { v = v | 1; }
        if (hdr.s[1].isValid()) { v = v | 2; }
        if (hdr.s[2].isValid()) { v = v | 4; }
        if (hdr.s[3].isValid()) { v = v | 8; }
        hdr.r.v = v;
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
