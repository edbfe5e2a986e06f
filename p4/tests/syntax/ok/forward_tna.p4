/* A small but realistic TNA program: L2 forwarding with a TofinoIngressParser helper,
 * bridged metadata, a RegisterAction counting packets per port, a Hash for ECMP, an
 * ingress mirror, and an IPv4 checksum update in the egress deparser. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

#define ETHERTYPE_IPV4 0x0800
#define MIRROR_TYPE_I2E 1
#define TABLE_SIZE 1024

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header bridged_md_h {
    bit<8> pkt_type;
    @padding bit<7> _pad;
    PortId_t ingress_port;
}

header mirror_h {
    bit<8> pkt_type;
    @padding bit<7> _pad;
    PortId_t ingress_port;
}

struct header_t {
    bridged_md_h bridged;
    ethernet_h ethernet;
    ipv4_h ipv4;
    ethernet_h[2] inner;
}

struct ig_metadata_t {
    bit<16> hash;
    MirrorId_t session;
    bool checksum_err;
}

struct eg_metadata_t {
    bridged_md_h bridged;
}

enum bit<8> pkt_type_t {
    NORMAL = 1,
    MIRROR = 2
}

parser TofinoIngressParser(
        packet_in pkt,
        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1 : parse_resubmit;
            0 : parse_port_metadata;
        }
    }

    state parse_resubmit {
        transition reject;
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition accept;
    }
}

parser SwitchIngressParser(
        packet_in pkt,
        out header_t hdr,
        out ig_metadata_t ig_md,
        out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;
    Checksum() ipv4_checksum;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        ig_md.hash = 0;
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type, pkt.lookahead<bit<8>>()) {
            (ETHERTYPE_IPV4, 8w0x45 &&& 8w0xff) : parse_ipv4;
            (0x8100 .. 0x8101, _) : accept;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        ig_md.checksum_err = ipv4_checksum.verify();
        transition accept;
    }
}

control SwitchIngress(
        inout header_t hdr,
        inout ig_metadata_t ig_md,
        in ingress_intrinsic_metadata_t ig_intr_md,
        in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
        inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
        inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Register<bit<32>, PortId_t>(512, 0) port_pkts;
    RegisterAction<bit<32>, PortId_t, bit<32>>(port_pkts) count_pkt = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (value < 32w0xffffffff) {
                value = value |+| 1;
            }
        }
    };
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) fwd_counter;
    bit<32> seen = 0;

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        fwd_counter.count();
    }

    action multicast(MulticastGroupId_t mgid) {
        ig_tm_md.mcast_grp_a = mgid;
    }

    action set_mirror(MirrorId_t session) {
        ig_md.session = session;
        ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
    }

    table dmac {
        key = {
            hdr.ethernet.dst_addr : exact @name("dst");
            ig_intr_md.ingress_port : ternary;
        }
        actions = {
            forward;
            multicast;
            @defaultonly drop;
        }
        const default_action = drop();
        size = TABLE_SIZE;
        counters = fwd_counter;
    }

    @name(".ipv4_lpm")
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { forward; drop; NoAction; }
        default_action = NoAction;
        const entries = {
            (32w0x0a000001) : forward(1);
            (32w0x0a000002) : forward(2);
        }
        size = 4096;
        idle_timeout = true;
    }

    table mirror_cfg {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_mirror; NoAction; }
        size = 64;
    }

    apply {
        seen = count_pkt.execute(ig_intr_md.ingress_port);
        ig_md.hash = flow_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol});
        switch (dmac.apply().action_run) {
            forward: {
                if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
                    hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                } else if (!hdr.ipv4.isValid()) {
                    exit;
                }
            }
            multicast:
            drop: {
                ig_tm_md.bypass_egress = 1w1;
            }
            default: {
                ipv4_lpm.apply();
            }
        }
        if (ipv4_lpm.apply().hit) {
            mirror_cfg.apply();
        }
        hdr.ethernet.src_addr[47:40] = (bit<8>) ig_md.hash[7:0];
        hdr.inner[0].setInvalid();
        hdr.inner.push_front(1);
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = (bit<8>) pkt_type_t.NORMAL;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        ig_tm_md.qid = ig_md.checksum_err ? 5w1 : 5w0;
    }
}

control SwitchIngressDeparser(
        packet_out pkt,
        inout header_t hdr,
        in ig_metadata_t ig_md,
        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;

    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_I2E) {
            mirror.emit<mirror_h>(ig_md.session, {(bit<8>) pkt_type_t.MIRROR, 0, 0});
        }
        pkt.emit(hdr);
    }
}

parser SwitchEgressParser(
        packet_in pkt,
        out header_t hdr,
        out eg_metadata_t eg_md,
        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(eg_md.bridged);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control SwitchEgress(
        inout header_t hdr,
        inout eg_metadata_t eg_md,
        in egress_intrinsic_metadata_t eg_intr_md,
        in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
        inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
        inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (eg_intr_md.egress_rid != 0) {
            hdr.ethernet.dst_addr = 48w0xffffffffffff;
        }
    }
}

control SwitchEgressDeparser(
        packet_out pkt,
        inout header_t hdr,
        in eg_metadata_t eg_md,
        in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version,
            hdr.ipv4.ihl,
            hdr.ipv4.diffserv,
            hdr.ipv4.total_len,
            hdr.ipv4.identification,
            hdr.ipv4.flags,
            hdr.ipv4.frag_offset,
            hdr.ipv4.ttl,
            hdr.ipv4.protocol,
            hdr.ipv4.src_addr,
            hdr.ipv4.dst_addr});
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
