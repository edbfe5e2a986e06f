/* A Tofino 2 extern pisa refuses as not modelled: LearnAction (hardware learning; LEARN2:
 * LearnAction2, as t2na.p4 declares it); with
 * SELECTOR_ACTION also a SelectorAction, which is modelled (only the learning is refused).
 * Otherwise like minmax.p4. */
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
#if defined(SELECTOR_ACTION)
    ActionProfile(4) members;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sel_hash;
    ActionSelector(members, sel_hash, SelectorMode_t.FAIR, 4, 2) sel;
    SelectorAction(sel) disable = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 0;
        }
    };
#endif

    RegisterAction<bit<16>, bit<16>, bit<16>>(cells) store = {
        void apply(inout bit<16> value) {
            value = hdr.data.v;
        }
    };
#if defined(LEARN2)
    LearnAction2<bit<16>, bit<16>, bit<16>, bit<16>, bit<8>>(cells) lo = {
        void apply(inout bit<16> value, in bit<16> digest, in bool learn, out bit<16> rv1,
                   out bit<8> rv2) {
            rv1 = value;
            rv2 = 1;
        }
    };
#else
    LearnAction<bit<16>, bit<16>, bit<16>, bit<16>>(cells) lo = {
        void apply(inout bit<16> value, in bit<16> digest, in bool learn, out bit<16> rv1) {
            rv1 = value;
        }
    };
#endif
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
            store.execute(hdr.data.i);
        } else if (hdr.data.op == 1) {
            hdr.data.best = lo.execute(hdr.data.i);
        } else if (hdr.data.op == 2) {
            hdr.data.best = hi.execute(hdr.data.i[2:0], hdr.data.lane3);
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
