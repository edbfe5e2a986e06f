/* The deparser's emit order when a header or a stack is emitted in more than one place. bf-p4c
   collects the emitted fields per header, and per stack for a stack's elements, in the order
   each is first emitted, then concatenates the groups (`parde/extract_deparser.cpp`,
   `generateEmits` keys an insertion-ordered map by the header's or the stack's name,
   `end_apply`): `emit(s[1])` after `emit(x)` joins `s[0]`'s group, and the second `emit(x)`
   joins the first. The wire takes s[0] x s[1] b; the deparser sends s[0] s[1] x x b. */
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
    byte_h[2] s;
    byte_h x;
    byte_h b;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5: bytes;
            default: accept;
        }
    }
    state bytes {
        pkt.extract(hdr.s[0]);
        pkt.extract(hdr.x);
        pkt.extract(hdr.s[1]);
        pkt.extract(hdr.b);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.s[0]);
        pkt.emit(hdr.x);
        pkt.emit(hdr.s[1]);
        pkt.emit(hdr.b);
        pkt.emit(hdr.x);
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

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
