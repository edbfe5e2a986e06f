// TNA idioms from everyday Tofino programs: port metadata, digests, resubmit, custom CRC
// hashes, meters, an action selector, a direct register action, and a two-pipe Switch.
#include <core.p4>
#include <tna.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header resub_h { bit<8> kind; bit<56> data; }
struct port_md_t { bit<16> port_tag; bit<48> _unused; }
struct hdr_t { eth_h eth; }
struct md_t { port_md_t port_md; resub_h resub; bit<32> flow; bit<8> color; }
struct learn_t { bit<48> src; PortId_t port; }

parser IgP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            0 : port_meta;
            1 : resubmitted;
        }
    }
    state port_meta {
        md.port_md = port_metadata_unpack<port_md_t>(pkt);
        transition parse_eth;
    }
    state resubmitted {
        pkt.extract(md.resub);
        transition parse_eth;
    }
    state parse_eth {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control Ig(inout hdr_t hdr, inout md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    CRCPolynomial<bit<32>>(32w0x04C11DB7, true, false, false, 32w0xFFFFFFFF, 32w0xFFFFFFFF) crc32c;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32c) flow_hash;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sel_hash;
    ActionProfile(1024) ecmp_profile;
    ActionSelector(ecmp_profile, sel_hash, SelectorMode_t.FAIR, 64, 128) ecmp_sel;
    Meter<bit<10>>(1024, MeterType_t.BYTES) meter;
    Lpf<bit<16>, bit<10>>(1024) lpf;
    Random<bit<8>>() rnd;
    DirectRegister<bit<32>>(0) last_seen;
    DirectRegisterAction<bit<32>, bit<32>>(last_seen) touch = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = (bit<32>) ig_intr_md.ingress_mac_tstamp;
        }
    };
    Register<bit<16>, _>(32w4096) sketch;

    action set_nhop(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action seen() { md.flow = touch.execute(); }
    action learn() { ig_dprsr_md.digest_type = 1; }
    action resubmit() { ig_dprsr_md.resubmit_type = 3w1; }

    table ecmp {
        key = {
            hdr.eth.dst : exact;
            md.flow : selector;
        }
        actions = { set_nhop; }
        size = 1024;
        implementation = ecmp_sel;
    }

    @stage(2)
    table flows {
        key = { md.flow : exact; }
        actions = { seen; learn; }
        registers = last_seen;
        idle_timeout = true;
    }

    apply {
        md.flow = flow_hash.get({hdr.eth.src, hdr.eth.dst, md.port_md.port_tag});
        md.color = meter.execute(md.flow[9:0], MeterColor_t.GREEN);
        bit<16> smooth = lpf.execute((bit<16>) md.flow, md.flow[9:0]);
        if (rnd.get() < 8w16 && smooth > 100) {
            resubmit();
        }
        ecmp.apply();
        flows.apply();
    }
}

control IgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Digest<learn_t>() learn_digest;
    Resubmit() resub;
    apply {
        if (ig_dprsr_md.digest_type == 1) {
            learn_digest.pack({hdr.eth.src, 9w0});
        }
        if (ig_dprsr_md.resubmit_type == 1) {
            resub.emit(md.resub);
        }
        pkt.emit(hdr);
    }
}

parser EgP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Eg(inout hdr_t hdr, inout md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD()) pipe_a;
Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD()) pipe_b;
Switch(pipe_a, pipe_b) main;
