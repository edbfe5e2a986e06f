/* Tofino 2's stateful-ALU counter as a FIFO (`enqueue`/`dequeue`) and a stack (`push`/`pop`)
 * over registers of 4 cells. data.op picks what runs:
 *   0: r1 = enq.enqueue()   writes a at the tail, outputs a (0 when full: squashed)
 *   1: r1 = deq.dequeue()   outputs the head cell (0 when empty: squashed)
 *   2: r1 = spush.push()    writes a on top, outputs a (0 when full)
 *   3: r1 = spop.pop()      outputs the top cell (0 when empty)
 * BAD_MIX makes one register both a FIFO and a log (the test expects it refused), BAD_NO_INDEX
 * runs an indexed RegisterAction without its index, BAD_MIN8 calls `this.min8` outside a
 * MinMaxAction (both refused as not modelled), BAD_FIVE_INSTRUCTIONS gives the stack three
 * RegisterActions and two handlers, five instructions for a stateful ALU of four,
 * BAD_HANDLER_COMPARES gives the dequeue an underflow handler of five comparisons (four compare
 * units); DEQ_ADDRESS
 * makes the dequeue output `this.address()`, the head cell's bit address (cell × 32). */
#include <core.p4>
#if defined(TNA)
#include <tna.p4>
#else
#include <t2na.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header data_h {
    bit<8>  op;
    bit<32> a;
    bit<32> r1;
    bit<32> r2;
    bit<32> r3;
    bit<32> r4;
    bit<16> p1;
}

struct headers_t {
    ethernet_h ethernet;
    data_h     data;
}
struct metadata_t { }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(4, 0) q;
    Register<bit<32>, bit<8>>(4, 0) st;

    RegisterAction<bit<32>, bit<8>, bit<32>>(q) enq = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.data.a;
            rv = hdr.data.a;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(q) deq = {
        void apply(inout bit<32> value, out bit<32> rv) {
#if defined(DEQ_ADDRESS)
            rv = this.address();
#else
            rv = value;
#endif
        }
#if defined(BAD_HANDLER_COMPARES)
        void underflow(inout bit<32> value, out bit<32> rv) {
            if (value == hdr.data.a) {
                rv = 1;
            } else if (value == hdr.data.r2) {
                rv = 2;
            } else if (value == hdr.data.r3) {
                rv = 3;
            } else if (value == hdr.data.r4) {
                rv = 4;
            } else if (value > hdr.data.a) {
                rv = 5;
            }
        }
#endif
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(st) spush = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.data.a;
            rv = hdr.data.a;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(st) spop = {
        void apply(inout bit<32> value, out bit<32> rv) {
#if defined(BAD_MIN8)
            rv = (bit<32>) this.min8(value, 16w0xf);
#else
            rv = value;
#endif
        }
#if defined(BAD_FIVE_INSTRUCTIONS)
        void underflow(out bit<32> rv) {
            rv = 1;
        }
#endif
    };
#if defined(BAD_FIVE_INSTRUCTIONS)
    RegisterAction<bit<32>, bit<8>, bit<32>>(st) speek = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
        void overflow(out bit<32> rv) {
            rv = 2;
        }
    };
#endif

    apply {
        if (hdr.data.op == 0) {
            hdr.data.r1 = enq.enqueue();
        } else if (hdr.data.op == 1) {
            hdr.data.r1 = deq.dequeue();
        } else if (hdr.data.op == 2) {
            hdr.data.r1 = spush.push();
        } else if (hdr.data.op == 3) {
            hdr.data.r1 = spop.pop();
        }
#if defined(BAD_MIX)
        else {
            hdr.data.r1 = deq.execute_log();
        }
#elif defined(BAD_NO_INDEX)
        else {
            hdr.data.r1 = deq.execute();
        }
#elif defined(BAD_FIVE_INSTRUCTIONS)
        else {
            hdr.data.r1 = speek.push();
        }
#endif
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
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
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
