/* An ActionSelector as bf-p4c configures it by default: the selector ALU scrambles each
   14-bit hash bucket through its SPS-14 substitution-permutation network before taking it
   modulo the active members (FAIR). IDENTITY hash of the 16-bit flow; five members. The
   expected members are worked out in action_selector_scrambled.stf. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> flow;
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
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) flow_hash;
    ActionProfile(16) ap;
    ActionSelector(ap, flow_hash, SelectorMode_t.FAIR, 8, 8) sel;
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    table t {
        key = {
            hdr.h.flow : selector;
            hdr.h.a    : exact;
        }
        actions = { set_b; NoAction; }
        implementation = sel;
        size = 16;
    }
    apply {
        t.apply();
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
