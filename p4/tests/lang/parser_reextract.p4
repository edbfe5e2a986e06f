/* A plain header extracted a second time later on the parse path, as a tunnel parser that
   re-parses the inner Ethernet header into `hdr.eth` would. bf-p4c counts a plain header as a
   stack of one (`parde/extract_parser.cpp`, `ResolveHeaderStackIndex`: "For normal header, we
   allow single extract"): the second extract is out of bounds and the state holding it is
   dropped, so the transition into it ends the parse. `eth` keeps the outer value, nothing of
   the state runs (`inner` is not extracted), and the inner bytes stay payload.
   The ingress control writes 0xEE into `t.mark` when `inner` is valid. */
#include <core.p4>
#include <tna.p4>

header eth_h {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header tag_h {
    bit<8> kind;
    bit<8> mark;
}
header inner_h {
    bit<16> v;
}
struct headers_t {
    eth_h eth;
    tag_h t;
    inner_h inner;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5: tunnel;
            default: accept;
        }
    }
    state tunnel {
        pkt.extract(hdr.t);
        transition select(hdr.t.kind) {
            1: inner_eth;
            default: plain_inner;
        }
    }
    state inner_eth {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.inner);
        transition accept;
    }
    state plain_inner {
        pkt.extract(hdr.inner);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.inner.isValid()) { hdr.t.mark = 0xEE; }
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
