/* A parser loop that runs too long: Tofino's parser stops after 128 states with its iteration
   timeout, PARSER_ERROR_TIMEOUT_USER (0x0008). bf-asm programs `max_iter` = 128 on Tofino 1
   and 2 (`parser-tofino-jbay.cpp`), and tofino-model raises `kErrTimeoutIter` (0x0008) when
   the next state would be the 129th (`ParserShared::parse`). bf-p4c keeps a loop without a
   stack `.next` as a hardware loop, so each iteration is a state. The loop skips zero bytes
   one at a time (`advance`: skipped bytes are header and leave the packet); the ingress
   control reads `parser_err` (so the packet is not dropped) and writes it into `r.err`. */
#include <core.p4>
#include <tna.p4>

header eth_h {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header r_h {
    bit<16> err;
}
struct headers_t {
    eth_h eth;
    r_h r;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.r);
        transition select(pkt.lookahead<bit<8>>()) {
            0: skip;
            default: accept;
        }
    }
    state skip {
        pkt.advance(8);
        transition select(pkt.lookahead<bit<8>>()) {
            0: skip;
            default: accept;
        }
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.r.err = ig_prsr_md.parser_err;
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
