/* Tofino 2's min/max unit: `cells` holds 16-bit cells, 8 to a 128-bit word. data.op 0 writes
 * data.v into cell data.i (a RegisterAction); op 1 runs `lo` on word data.i (the smallest cell
 * of the lanes data.m enables, and its lane through rv2); op 2 runs `hi` (the largest, lane
 * through a bit<3> output of its own type, MinMaxAction2). `bytes` holds 8-bit cells, 16 to a
 * word: op 3 writes data.v[7:0] into byte cell data.i, op 4 runs `lo8` (min8 over the lanes of
 * the 16-bit mask data.v, lane through rv2). Built with `--target tofino2`. */
#include <core.p4>
#include <t2na.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header data_h {
    bit<8>  op;
    bit<16> i;
    bit<16> v;
    bit<8>  m;
    bit<16> best;
    bit<16> lane;
    bit<3>  lane3;
    bit<5>  pad;
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
    Register<bit<16>, bit<16>>(64) cells;
    Register<bit<8>, bit<16>>(32) bytes;

    RegisterAction<bit<8>, bit<16>, bit<8>>(bytes) store8 = {
        void apply(inout bit<8> value) {
            value = hdr.data.v[7:0];
        }
    };
    MinMaxAction<bit<8>, bit<1>, bit<16>>(bytes) lo8 = {
        void apply(inout bit<128> value, out bit<16> rv1, out bit<16> rv2) {
            rv1 = (bit<16>) this.min8(value, hdr.data.v, rv2);
        }
    };

    RegisterAction<bit<16>, bit<16>, bit<16>>(cells) store = {
        void apply(inout bit<16> value) {
            value = hdr.data.v;
        }
    };
    MinMaxAction<bit<16>, bit<3>, bit<16>>(cells) lo = {
        void apply(inout bit<128> value, out bit<16> rv1, out bit<16> rv2) {
            rv1 = this.min16(value, hdr.data.m, rv2);
        }
    };
    MinMaxAction2<bit<16>, bit<3>, bit<16>, bit<3>>(cells) hi = {
        void apply(inout bit<128> value, out bit<16> rv1, out bit<3> rv2) {
#if defined(BAD_POSTMOD)
            rv1 = this.max16(value, hdr.data.m, rv2, 1);
#elif defined(BAD_LANE)
            rv1 = (bit<16>) this.max8(value, 16w0xffff, rv2);
#else
            rv1 = this.max16(value, hdr.data.m, rv2);
#endif
        }
    };

    apply {
        if (hdr.data.op == 0) {
#if defined(BAD_NAMED_NO_INDEX)
            store.execute(rv2 = hdr.data.v);
#else
            store.execute(hdr.data.i);
#endif
        } else if (hdr.data.op == 1) {
#if defined(BAD_NO_INDEX)
            hdr.data.best = lo.execute();
#else
            hdr.data.best = lo.execute(hdr.data.i[2:0], hdr.data.lane);
#endif
        } else if (hdr.data.op == 2) {
            hdr.data.best = hi.execute(hdr.data.i[2:0], hdr.data.lane3);
        } else if (hdr.data.op == 3) {
            store8.execute(hdr.data.i);
        } else if (hdr.data.op == 4) {
            hdr.data.best = lo8.execute(hdr.data.i[0:0], hdr.data.lane);
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
