/* RegisterActions on a paired register and a scalar one, a direct register, hashes (preset and
 * custom CRC), Random, a Meter, a RegisterParam and an indexed counter. */
#include <core.p4>
#include <tna.p4>

/* A CRC definition at top level (stateless, so it may be shared). */
CRCPolynomial<bit<32>>(32w0x1EDC6F41, true, false, false, 32w0xFFFFFFFF, 32w0xFFFFFFFF) crc32c;

struct seq_pair_t {
    bit<32> last_seq;
    bit<32> repeats;
}

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header seq_h {
    bit<16> flow;
    bit<32> seq;
    bit<32> value;
    bit<32> hash32;
    bit<16> hash16;
    bit<16> rnd;
    bit<8>  color;
    bit<8>  flags;
}

struct headers_t {
    ethernet_h ethernet;
    seq_h      seq;
}

struct metadata_t {
    @pa_no_overlay("ingress", "meta.repeats")
    bit<32> repeats;
    bit<32> total;
    bit<16> idx;
    bit<1>  over;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5 : parse_seq;
            default : accept;
        }
    }
    state parse_seq {
        pkt.extract(hdr.seq);
        transition accept;
    }
}

@pa_no_overlay("ingress", "meta.total")
@pa_container_size("ingress", "meta.idx", 16)
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Register<seq_pair_t, bit<16>>(4096, {0, 0}) seqs;
    RegisterAction<seq_pair_t, bit<16>, bit<32>>(seqs) check_seq = {
        void apply(inout seq_pair_t value, out bit<32> rv) {
            if (value.last_seq == hdr.seq.seq) {
                value.repeats = value.repeats + 1;
            } else {
                value.last_seq = hdr.seq.seq;
                value.repeats = 0;
            }
            rv = value.repeats;
        }
    };

    RegisterParam<bit<32>>(1000) limit;
    Register<bit<32>, bit<16>>(4096) totals;
    RegisterAction<bit<32>, bit<16>, bit<32>>(totals) add_total = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (value < limit.read()) {
                value = value |+| hdr.seq.value;
            }
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(totals) clear_total = {
        void apply(inout bit<32> value) {
            value = 0;
        }
    };

    DirectRegister<bit<16>>() last_flow;
    DirectRegisterAction<bit<16>, bit<16>>(last_flow) swap_flow = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            value = hdr.seq.flow;
        }
    };

    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32c) flow_hash32;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash16;
    Random<bit<16>>() rng;
    Meter<bit<16>>(1024, MeterType_t.BYTES) flow_meter;
    Counter<bit<32>, bit<16>>(4096, CounterType_t.PACKETS) flow_pkts;
    Register<bit<16>, bit<16>>(256) plain;

    action remember() {
        hdr.seq.flow = swap_flow.execute();
    }

    @stage(3)
    table flows {
        key = {
            hdr.seq.flow : exact;
        }
        actions = {
            remember;
            NoAction;
        }
        registers = last_flow;
        size = 1024;
    }

    action account() {
        meta.repeats = check_seq.execute(meta.idx);
        meta.total = add_total.execute(meta.idx);
    }

    apply {
        if (hdr.seq.isValid()) {
            meta.idx = flow_hash16.get({hdr.ethernet.src_addr, hdr.seq.flow});
            hdr.seq.hash32 = flow_hash32.get({hdr.seq.flow, hdr.seq.seq});
            hdr.seq.hash16 = meta.idx;
            hdr.seq.rnd = rng.get();
            funnel_shift_right(hdr.seq.value, hdr.seq.seq, hdr.seq.value, 8);
            if (hdr.seq.flags == 0xff) {
                clear_total.execute(meta.idx);
            } else {
                account();
            }
            hdr.seq.color = flow_meter.execute(meta.idx);
            flow_pkts.count(meta.idx);
            if (hdr.seq.flags == 1) {
                hdr.seq.hash16 = plain.read(meta.idx);
            } else {
                plain.write(meta.idx, hdr.seq.flow);
            }
            flows.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
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
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
