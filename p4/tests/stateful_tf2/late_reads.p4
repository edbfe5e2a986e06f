/* Reads of the register's value after the RegisterAction writes it, as bf-p4c compiles them
 * for the stateful ALU (Tofino 1 with -D TNA, and Tofino 2). data.op picks what runs on cell 0:
 *   0: r1 = bump.execute(0)     value = value + 1; then a condition on value: the compare unit
 *                               reads the memory word (before the + 1)
 *   1: r1 = add_out.execute(0)  value = value + a; rv = value: the ALU result (after; a = 0
 *                               reads the cell)
 *   2: r1 = computed.execute(0) value = value + 1; rv = value + 10: the output ALU reads memory
 *   3: r1 = copied.execute(0)   value = a; then a condition on value: bf-p4c's copy propagation
 *                               makes it a condition on a
 * BAD_DOUBLE_WRITE: value written twice on one path (bf-p4c refuses it). */
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
    Register<bit<32>, bit<8>>(4, 0) cnt;

    RegisterAction<bit<32>, bit<8>, bit<32>>(cnt) bump = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
#if defined(BAD_DOUBLE_WRITE)
            if (value > 2) {
                value = 0;
            }
#endif
            if (value > 2) {
                rv = 1;
            } else {
                rv = 0;
            }
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(cnt) add_out = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + hdr.data.a;
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(cnt) computed = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value + 10;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(cnt) copied = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.data.a;
            if (value == 7) {
                rv = 1;
            } else {
                rv = 2;
            }
        }
    };

    apply {
        if (hdr.data.op == 0) {
            hdr.data.r1 = bump.execute(0);
        } else if (hdr.data.op == 1) {
            hdr.data.r1 = add_out.execute(0);
        } else if (hdr.data.op == 2) {
            hdr.data.r1 = computed.execute(0);
        } else if (hdr.data.op == 3) {
            hdr.data.r1 = copied.execute(0);
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
