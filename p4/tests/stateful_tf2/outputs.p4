/* Tofino 2's stateful ALU: a RegisterAction with four outputs, a RegisterAction2 with an
 * output of its own type, and Register.clear. data.op picks what runs:
 *   0: hdr.r1 = add4.execute(0, r2, r3, r4)   (rv1 old value, rv2 new value, rv3 the input,
 *                                             rv4 old value + 1: an output computed after
 *                                             the write would read memory all the same)
 *   1: add4 as a statement from an action, rv2 only (rv1, rv3, rv4 dropped)
 *   2: acc.clear(9)                            (every cell of acc becomes 9)
 *   3: hdr.r1 = two.execute(1, p1)             (rv1 old value, rv2 the new value's low half)
 *   4: table `direct` hits: hdr.r1 = dtwo.execute(p1) on its DirectRegister (rv1 and rv2 the
 *      new value, rv2 as bit<16>)
 * Built with `--target tofino2`; BAD_* defines make the misuses the tests expect refused. */
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
    Register<bit<32>, bit<8>>(16, 5) acc;
    Register<bit<32>, bit<8>>(16, 0x12345678) acc2;

#if defined(BAD_ONE_OUTPUT)
    RegisterAction<bit<32>, bit<8>, bit<32>>(acc) add4 = {
        void apply(inout bit<32> value, out bit<32> rv1, out bit<32> rv2) {
            rv1 = value;
            rv2 = value;
        }
    };
#else
    RegisterAction<bit<32>, bit<8>, bit<32>>(acc) add4 = {
        void apply(inout bit<32> value, out bit<32> rv1, out bit<32> rv2, out bit<32> rv3,
                   out bit<32> rv4) {
            rv1 = value;
            rv4 = value + 1;
            value = value + hdr.data.a;
            rv2 = value;
            rv3 = hdr.data.a;
        }
    };
    RegisterAction2<bit<32>, bit<8>, bit<32>, bit<16>>(acc2) two = {
        void apply(inout bit<32> value, out bit<32> rv1, out bit<16> rv2) {
            rv1 = value;
            value = value + 1;
            rv2 = value[15:0];
        }
    };
#endif

    DirectRegister<bit<32>>(100) dreg;
    DirectRegisterAction2<bit<32>, bit<32>, bit<16>>(dreg) dtwo = {
        void apply(inout bit<32> value, out bit<32> rv1, out bit<16> rv2) {
            value = value + 1;
            rv1 = value;
            rv2 = value[15:0];
        }
    };
    action dcount() {
        hdr.data.r1 = dtwo.execute(hdr.data.p1);
    }
    table direct {
        key = { hdr.data.op : exact; }
        actions = { dcount; NoAction; }
        const entries = { 4 : dcount(); }
        default_action = NoAction;
        registers = dreg;
        size = 4;
    }

    action add_only_rv2() {
        add4.execute(0, hdr.data.r2);
    }

#if defined(BAD_CLEAR_ARG)
    action wipe() { acc.clear(hdr.data.a); }
#else
    action wipe() { acc.clear(32w9); }
#endif

    apply {
        if (hdr.data.op == 0) {
#if defined(BAD_IN_EXPRESSION)
            if (add4.execute(0, hdr.data.r2, hdr.data.r3, hdr.data.r4) == 1) {
                hdr.data.r1 = 1;
            }
#else
            hdr.data.r1 = add4.execute(0, hdr.data.r2, hdr.data.r3, hdr.data.r4);
#endif
        } else if (hdr.data.op == 1) {
            add_only_rv2();
        } else if (hdr.data.op == 2) {
            wipe();
        } else if (hdr.data.op == 3) {
#if defined(BAD_MISSING_OUT)
            hdr.data.r1 = two.execute(1);
#else
            hdr.data.r1 = two.execute(1, hdr.data.p1);
#endif
        } else if (hdr.data.op == 4) {
            direct.apply();
        }
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
