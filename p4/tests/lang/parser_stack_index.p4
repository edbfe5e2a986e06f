/* Header stack `.next` and `.last` in a parser without loops, resolved as bf-p4c resolves them
   (`parde/extract_parser.cpp`, `createBackendParser` step 2, `ResolveHeaderStackIndex`): one
   constant index per state, from the closest states before it on the graph that touch the
   stack, the same on every path; a state whose index is out of the stack is dropped, so the
   transition into it ends the parse and none of its statements run.
   - `a` and `b` both lead to `tail`; `a` extracts s[0], so `tail`'s `.next` is s[1] on both
     paths: through `b` it fills s[1] and leaves s[0] invalid (P4 would fill s[0]).
   - `full2` comes after `full1` filled the stack: its `.next` is out of bounds, the whole state
     is dropped, `x` (extracted before the `.next`) included.
   - `chk` reads `s.last` with no extract of `s` before it: index -1, the state is dropped and
     `c` is not extracted.
   The ingress control reports s[0], s[1], x, c valid in bits 0..3 of `r.v`. */
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
    byte_h[2] s;
    byte_h x;
    byte_h c;
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
            1: a;
            2: b;
            3: full1;
            4: chk;
            default: accept;
        }
    }
    state a { pkt.extract(hdr.s.next); transition tail; }
    state b { pkt.extract(hdr.x); transition tail; }
    state tail { pkt.extract(hdr.s.next); transition accept; }
    state full1 {
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition full2;
    }
    state full2 {
        pkt.extract(hdr.x);
        pkt.extract(hdr.s.next);
        transition accept;
    }
    state chk {
        pkt.extract(hdr.c);
        transition select(hdr.s.last.v) {
            0x77: accept;
            default: accept;
        }
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        bit<8> v = 0;
        if (hdr.s[0].isValid()) { v = v | 1; }
        if (hdr.s[1].isValid()) { v = v | 2; }
        if (hdr.x.isValid()) { v = v | 4; }
        if (hdr.c.isValid()) { v = v | 8; }
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
