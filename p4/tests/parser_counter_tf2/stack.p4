/* Tofino 2's parser counter stack, one operation per parser state, then a loop that takes
 * one byte per count until the counter is zero; the control writes the number of bytes
 * taken into `res.n`. Values the stack holds are shown as [top, ..., bottom].
 * Default (depth): set(9); push(1), push(2), push(3), push(4), none with update_with_top:
 *   the stack holds three entries under the counter, so the fourth push loses the 9:
 *   counter 4 over [3, 2, 1]. Four pops: 3, 2, 1, then 0 (an empty stack pops 0, no error);
 *   increment(3): 3 bytes counted (12 had the 9 survived).
 * CHAIN: set(5); push(2, true); push(3, true); push(4, false): counter 4 over [3, 2u, 5u]
 *   (u: update_with_top). decrement(1): counter 3, nothing else (the top entry's flag is
 *   clear, which stops the chain). pop: counter 3 over [2u, 5u]; decrement(1): counter 2
 *   over [1u, 4u]; pop: 1 over [4u]; pop: 4 bytes counted.
 * SET_UNDER: set(1); push(1, true): counter 1 over [1u]; set(4): counter 4, and the
 *   hardware adds the loaded 4 to the flagged entry too (JBAY-2717; bf-p4c cancels that
 *   only for a push): [5u]; pop: 5 bytes counted.
 * Built with `--target tofino2`. */
#include <core.p4>
#include <t2na.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}
header res_h { bit<8> n; }
header byte_h { bit<8> b; }

struct headers_t {
    ethernet_h ethernet;
    res_h      res;
    byte_h[15] data;
}
struct metadata_t { }

#if defined(SET_UNDER)
#define OP0 pc.set(1)
#define OP1 pc.push(1, true)
#define OP2 pc.set(4)
#define OP3 pc.pop()
#define OP4
#define OP5
#define OP6
#define OP7
#define OP8
#elif defined(CHAIN)
#define OP0 pc.set(5)
#define OP1 pc.push(2, true)
#define OP2 pc.push(3, true)
#define OP3 pc.push(4, false)
#define OP4 pc.decrement(1)
#define OP5 pc.pop()
#define OP6 pc.decrement(1)
#define OP7 pc.pop()
#define OP8 pc.pop()
#else
#define OP0 pc.set(9)
#define OP1 pc.push(1)
#define OP2 pc.push(2)
#define OP3 pc.push(3)
#define OP4 pc.push(4)
#define OP5 pc.pop()
#define OP6 pc.pop()
#define OP7 pc.pop()
#define OP8 pc.pop()
#define OP9 pc.increment(3)
#endif

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.res);
        OP0;
        transition s1;
    }
    state s1 { OP1; transition s2; }
    state s2 { OP2; transition s3; }
    state s3 { OP3; transition s4; }
    state s4 { OP4; transition s5; }
    state s5 { OP5; transition s6; }
    state s6 { OP6; transition s7; }
    state s7 { OP7; transition s8; }
    state s8 { OP8; transition s9; }
    state s9 {
#if defined(OP9)
        OP9;
#endif
        transition count;
    }
    state count {
        transition select(pc.is_zero(), pc.is_negative()) {
            (true, _): accept;
            (_, true): reject;
            default: one;
        }
    }
    state one {
        pkt.extract(hdr.data.next);
        pc.decrement(1);
        transition count;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        bit<8> n = 0;
        if (hdr.data[14].isValid()) { n = 15; }
        else if (hdr.data[11].isValid()) { n = 12; }
        else if (hdr.data[4].isValid()) { n = 5; }
        else if (hdr.data[3].isValid()) { n = 4; }
        else if (hdr.data[2].isValid()) { n = 3; }
        else if (hdr.data[1].isValid()) { n = 2; }
        else if (hdr.data[0].isValid()) { n = 1; }
        hdr.res.n = n;
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
