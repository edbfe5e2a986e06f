/* The stateful ALU's predicate output and log counter, on Tofino 1 (-D TNA) and Tofino 2.
 * data.op picks what runs:
 *   0: r1 = cmp.execute(0)    this.predicate(value.lo > a, value.hi < a) on the pair {10, 20}
 *   1: r1 = one.execute(0)    this.predicate(value.lo == a): one condition, the other false
 *   2: r1 = logit.execute_log()   writes a into the next cell, returns the cell's old value
 *   3: r1 = peek.execute(a)   the log register's cell a (read only)
 *   4: r1 = three.execute(0)  (Tofino 2) this.predicate(value.lo > a, value.hi < a, true)
 * BAD_* defines make the misuses the tests expect refused (BAD_ORDER: a condition before the
 * predicate takes compare unit 0, which its first argument needs). */
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

struct pair_t {
    bit<32> lo;
    bit<32> hi;
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<pair_t, bit<8>>(4, {10, 20}) pairs;
    Register<bit<32>, bit<8>>(4, 0) logr;

    RegisterAction<pair_t, bit<8>, bit<32>>(pairs) cmp = {
        void apply(inout pair_t value, out bit<32> rv) {
#if defined(BAD_TWO_COMPARISONS)
            rv = this.predicate(value.lo > hdr.data.a && value.hi > hdr.data.a);
#elif defined(BAD_TOO_MANY)
            rv = this.predicate(value.lo > hdr.data.a, value.hi < hdr.data.a, true);
#else
            rv = this.predicate(value.lo > hdr.data.a, value.hi < hdr.data.a);
#endif
        }
    };
    RegisterAction<pair_t, bit<8>, bit<32>>(pairs) one = {
        void apply(inout pair_t value, out bit<32> rv) {
#if defined(BAD_ORDER)
            if (value.hi == hdr.data.a) {
                value.hi = 0;
            }
#endif
            rv = this.predicate(value.lo == hdr.data.a);
        }
    };
#if !defined(TNA)
    RegisterAction<pair_t, bit<8>, bit<32>>(pairs) three = {
        void apply(inout pair_t value, out bit<32> rv) {
            rv = this.predicate(value.lo > hdr.data.a, value.hi < hdr.data.a, true);
        }
    };
#endif
    RegisterAction<bit<32>, bit<8>, bit<32>>(logr) logit = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = hdr.data.a;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(logr) peek = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

#if defined(BAD_OUTSIDE_APPLY)
    action misuse() { hdr.data.r1 = cmp.predicate(true); }
#endif
#if defined(BAD_DIRECT_LOG)
    DirectRegister<bit<32>>() dreg;
    DirectRegisterAction<bit<32>, bit<32>>(dreg) dlog = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    action dl() { hdr.data.r1 = dlog.execute_log(); }
    table dt {
        key = { hdr.data.op : exact; }
        actions = { dl; }
        registers = dreg;
        size = 4;
    }
#endif

    apply {
        if (hdr.data.op == 0) {
            hdr.data.r1 = cmp.execute(0);
        } else if (hdr.data.op == 1) {
            hdr.data.r1 = one.execute(0);
        } else if (hdr.data.op == 2) {
            hdr.data.r1 = logit.execute_log();
        } else if (hdr.data.op == 3) {
            hdr.data.r1 = peek.execute(hdr.data.a[7:0]);
        }
#if !defined(TNA)
        else if (hdr.data.op == 4) {
            hdr.data.r1 = three.execute(0);
        }
#endif
#if defined(BAD_OUTSIDE_APPLY)
        misuse();
#endif
#if defined(BAD_DIRECT_LOG)
        dt.apply();
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
