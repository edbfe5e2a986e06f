/* switch.p4 — pisa's own stress case: a data-center/campus switch of the shape of the SDE's
 * switch program, written for pisa (L2 with VLANs and learning, IPv4/IPv6 routing with VRFs and
 * ECMP through an action selector, ACL with mirroring, storm control, VXLAN termination and
 * encapsulation). Its STF tests are p4/programs/tests/switch_*.stf (expected bytes from scapy,
 * make_switch_stf.py); `pisa bench pipeline` runs it beside l2l3.p4.
 *
 * Ingress, in order:
 *   - the bridge domain (BD) and VRF of a packet: from its ingress port (untagged) or from port
 *     and VLAN id (tagged);
 *   - VXLAN termination: an IPv4/UDP 4789 packet to a local VTEP address with a known VNI is
 *     decapsulated into that VNI's BD, the inner frame bridged or routed like any other;
 *   - source MAC learning: an unknown (BD, source MAC) is sent to the control plane as a digest;
 *   - routing: a frame to a router MAC of its BD carrying IPv4 or IPv6 is routed: the FIB (VRF,
 *     longest prefix) gives a next hop or an ECMP group (a member picked by the selector's hash
 *     of the 5-tuple); the next hop gives the egress BD and MAC, or a VXLAN tunnel; TTL / hop
 *     limit is decremented (packets with TTL <= 1 or a bad IPv4 checksum are dropped);
 *   - a ternary ACL may deny or mirror (an ingress mirror session), counted per entry;
 *   - bridging: (BD, destination MAC) gives the egress port; unknown unicast floods the BD's
 *     multicast group (group id = BD), the ingress port pruned, and flooding is rate limited
 *     per ingress port (storm control, a meter: red is dropped).
 * Egress: routed packets get their BD's router MAC as source; the VLAN tag is pushed or removed
 * for the egress port and BD; a tunnel next hop wraps the frame in Ethernet/IPv4/UDP/VXLAN.
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<16> bd_t;
typedef bit<12> vrf_t;
typedef bit<16> nexthop_t;
typedef bit<16> tunnel_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_IPV6 = 0x86dd;
const bit<16> ETHERTYPE_VLAN = 0x8100;
const bit<8>  IP_PROTOCOLS_TCP = 6;
const bit<8>  IP_PROTOCOLS_UDP = 17;
const bit<16> UDP_PORT_VXLAN = 4789;

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header vlan_h {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header ipv6_h {
    bit<4>      version;
    bit<8>      traffic_class;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* The first four bytes of TCP: its ports. */
header tcp_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

header vxlan_h {
    bit<8>  flags;
    bit<24> reserved;
    bit<24> vni;
    bit<8>  reserved2;
}

/* Travels from the ingress deparser to the egress parser in front of the packet. */
header bridged_md_h {
    bd_t     bd;
    tunnel_t tunnel;
    bit<7>   pad;
    bit<1>   routed;
}

struct header_t {
    ethernet_h  ethernet;
    vlan_h      vlan;
    ipv4_h      ipv4;
    ipv6_h      ipv6;
    udp_h       udp;
    tcp_ports_h tcp;
    vxlan_h     vxlan;
    ethernet_h  inner_ethernet;
    ipv4_h      inner_ipv4;
}

struct learn_t {
    bd_t       bd;
    mac_addr_t src_addr;
    PortId_t   ingress_port;
}

struct ingress_metadata_t {
    bridged_md_h bridged;
    vrf_t        vrf;
    nexthop_t    nexthop;
    bit<16>      ecmp_group;
    bit<16>      l4_src_port;
    bit<16>      l4_dst_port;
    bit<8>       l4_proto;
    bool         ipv4_checksum_err;
    bool         routable;
    bool         use_ecmp;
    MirrorId_t   mirror_session;
    PortId_t     ingress_port;
    bit<8>       storm_color;
}

struct egress_metadata_t {
    bridged_md_h bridged;
}

/* ------------------------------------------------------------------------------------------ */
/* Ingress                                                                                    */
/* ------------------------------------------------------------------------------------------ */

parser SwitchIngressParser(packet_in pkt,
                           out header_t hdr,
                           out ingress_metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_checksum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        ig_md.l4_src_port = 0;
        ig_md.l4_dst_port = 0;
        ig_md.l4_proto = 0;
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_VLAN : parse_vlan;
            ETHERTYPE_IPV4 : parse_ipv4;
            ETHERTYPE_IPV6 : parse_ipv6;
            default : accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            ETHERTYPE_IPV6 : parse_ipv6;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        ig_md.ipv4_checksum_err = ipv4_checksum.verify();
        ig_md.l4_proto = hdr.ipv4.protocol;
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTOCOLS_TCP) : parse_tcp;
            (5, 0, IP_PROTOCOLS_UDP) : parse_udp;
            default : accept;
        }
    }

    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        ig_md.l4_proto = hdr.ipv6.next_hdr;
        transition select(hdr.ipv6.next_hdr) {
            IP_PROTOCOLS_TCP : parse_tcp;
            IP_PROTOCOLS_UDP : parse_udp;
            default : accept;
        }
    }

    state parse_tcp {
        pkt.extract(hdr.tcp);
        ig_md.l4_src_port = hdr.tcp.src_port;
        ig_md.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        ig_md.l4_src_port = hdr.udp.src_port;
        ig_md.l4_dst_port = hdr.udp.dst_port;
        transition select(hdr.udp.dst_port) {
            UDP_PORT_VXLAN : parse_vxlan;
            default : accept;
        }
    }

    state parse_vxlan {
        pkt.extract(hdr.vxlan);
        pkt.extract(hdr.inner_ethernet);
        transition select(hdr.inner_ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_inner_ipv4;
            default : accept;
        }
    }

    state parse_inner_ipv4 {
        pkt.extract(hdr.inner_ipv4);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr,
                      inout ingress_metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) ingress_port_counter;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) acl_counter;
    Meter<PortId_t>(512, MeterType_t.PACKETS) storm_control;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;
    ActionProfile(1024) ecmp_members;
    ActionSelector(ecmp_members, ecmp_hash, SelectorMode_t.FAIR, 16, 256) ecmp_selector;
    Alpm(number_partitions = 1024, subtrees_per_partition = 2) ipv4_alpm;

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    /* ---- bridge domain and VRF ---- */

    action set_bd(bd_t bd, vrf_t vrf) {
        ig_md.bridged.bd = bd;
        ig_md.vrf = vrf;
    }

    table port_bd {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_bd; drop; }
        default_action = drop();
        size = 512;
    }

    table vlan_bd {
        key = {
            ig_intr_md.ingress_port : exact;
            hdr.vlan.vid            : exact;
        }
        actions = { set_bd; drop; }
        default_action = drop();
        size = 4096;
    }

    /* ---- VXLAN termination ---- */

    action terminate(bd_t bd, vrf_t vrf) {
        ig_md.bridged.bd = bd;
        ig_md.vrf = vrf;
        hdr.ethernet = hdr.inner_ethernet;
        hdr.ipv4 = hdr.inner_ipv4;
        hdr.inner_ethernet.setInvalid();
        hdr.inner_ipv4.setInvalid();
        hdr.vxlan.setInvalid();
        hdr.udp.setInvalid();
        hdr.vlan.setInvalid();
        ig_md.l4_src_port = 0;
        ig_md.l4_dst_port = 0;
    }

    table tunnel_term {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.vxlan.vni     : exact;
        }
        actions = { terminate; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* ---- learning ---- */

    action learn() {
        ig_dprsr_md.digest_type = 1;
    }

    table smac {
        key = {
            ig_md.bridged.bd      : exact;
            hdr.ethernet.src_addr : exact;
        }
        actions = { NoAction; learn; }
        default_action = learn();
        size = 8192;
    }

    /* ---- routing ---- */

    action routable() {
        ig_md.routable = true;
    }

    table rmac {
        key = {
            ig_md.bridged.bd      : exact;
            hdr.ethernet.dst_addr : exact;
        }
        actions = { routable; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    action fib_nexthop(nexthop_t nexthop) {
        ig_md.nexthop = nexthop;
        ig_md.use_ecmp = false;
    }

    action fib_ecmp(bit<16> group) {
        ig_md.ecmp_group = group;
        ig_md.use_ecmp = true;
    }

    table ipv4_fib {
        key = {
            ig_md.vrf         : exact;
            hdr.ipv4.dst_addr : lpm;
        }
        actions = { fib_nexthop; fib_ecmp; drop; }
        default_action = drop();
        implementation = ipv4_alpm;
        size = 16384;
    }

    table ipv6_fib {
        key = {
            ig_md.vrf         : exact;
            hdr.ipv6.dst_addr : lpm;
        }
        actions = { fib_nexthop; fib_ecmp; drop; }
        default_action = drop();
        size = 4096;
    }

    action set_nexthop(nexthop_t nexthop) {
        ig_md.nexthop = nexthop;
    }

    table ecmp {
        key = {
            ig_md.ecmp_group  : exact;
            hdr.ipv4.src_addr : selector;
            hdr.ipv4.dst_addr : selector;
            ig_md.l4_proto    : selector;
            ig_md.l4_src_port : selector;
            ig_md.l4_dst_port : selector;
        }
        actions = { set_nexthop; }
        implementation = ecmp_selector;
        size = 1024;
    }

    /* A next hop: the egress BD and the neighbour's MAC (the L2 tables then find the port), or
     * a VXLAN tunnel that egress builds. */
    action route(bd_t bd, mac_addr_t dmac) {
        ig_md.bridged.bd = bd;
        ig_md.bridged.routed = 1;
        hdr.ethernet.dst_addr = dmac;
    }

    action route_tunnel(bd_t bd, mac_addr_t dmac, tunnel_t tunnel) {
        ig_md.bridged.bd = bd;
        ig_md.bridged.routed = 1;
        ig_md.bridged.tunnel = tunnel;
        hdr.ethernet.dst_addr = dmac;
    }

    table nexthop {
        key = { ig_md.nexthop : exact; }
        actions = { route; route_tunnel; drop; }
        default_action = drop();
        size = 4096;
    }

    /* ---- bridging ---- */

    action to_port(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    /* Unknown unicast floods the BD's group; the PRE prunes the ingress port (the control plane
     * keeps an L2 exclusion entry per port: xid = port -> {port}). */
    action flood() {
        ig_tm_md.mcast_grp_a = ig_md.bridged.bd;
        ig_tm_md.level2_exclusion_id = ig_intr_md.ingress_port;
        /* Storm control: flooded packets are metered per ingress port, red ones dropped. */
        ig_md.storm_color = storm_control.execute(ig_intr_md.ingress_port);
    }

    table dmac {
        key = {
            ig_md.bridged.bd      : exact;
            hdr.ethernet.dst_addr : exact;
        }
        actions = { to_port; flood; drop; }
        default_action = flood();
        size = 16384;
    }

    /* ---- ACL ---- */

    action acl_permit() {
        acl_counter.count();
    }

    action acl_deny() {
        acl_counter.count();
        ig_dprsr_md.drop_ctl = 0x1;
    }

    action acl_mirror(MirrorId_t session) {
        acl_counter.count();
        ig_dprsr_md.mirror_type = 1;
        ig_md.mirror_session = session;
    }

    table acl {
        key = {
            ig_intr_md.ingress_port : ternary;
            hdr.ipv4.src_addr       : ternary;
            hdr.ipv4.dst_addr       : ternary;
            ig_md.l4_proto          : ternary;
            ig_md.l4_dst_port       : range;
        }
        actions = { acl_permit; acl_deny; acl_mirror; }
        default_action = acl_permit();
        counters = acl_counter;
        size = 1024;
    }

    apply {
        ingress_port_counter.count(ig_intr_md.ingress_port);
        ig_md.bridged.setValid();
        ig_md.bridged.tunnel = 0;
        ig_md.bridged.routed = 0;
        ig_md.bridged.pad = 0;
        ig_md.routable = false;
        ig_md.use_ecmp = false;
        ig_md.mirror_session = 0;
        ig_md.ingress_port = ig_intr_md.ingress_port;
        ig_md.storm_color = MeterColor_t.GREEN;

        if (hdr.vlan.isValid()) {
            vlan_bd.apply();
        } else {
            port_bd.apply();
        }
        if (hdr.vxlan.isValid()) {
            tunnel_term.apply();
        }
        smac.apply();
        rmac.apply();
        if (hdr.ipv4.isValid()) {
            acl.apply();
        }

        if (ig_md.routable && hdr.ipv4.isValid()) {
            if (ig_md.ipv4_checksum_err || hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                ipv4_fib.apply();
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            }
        } else if (ig_md.routable && hdr.ipv6.isValid()) {
            if (hdr.ipv6.hop_limit <= 1) {
                drop();
            } else {
                ipv6_fib.apply();
                hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
            }
        }
        if (ig_md.use_ecmp) {
            ecmp.apply();
        }
        if (ig_md.routable) {
            nexthop.apply();
        }

        dmac.apply();
        if (ig_md.storm_color == MeterColor_t.RED) {
            drop();
        }
    }
}

control SwitchIngressDeparser(packet_out pkt,
                              inout header_t hdr,
                              in ingress_metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    Mirror() mirror;
    Digest<learn_t>() learn_digest;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit(ig_md.mirror_session);
        }
        if (ig_dprsr_md.digest_type == 1) {
            learn_digest.pack({ig_md.bridged.bd, hdr.ethernet.src_addr, ig_md.ingress_port});
        }
        pkt.emit(ig_md.bridged);
        pkt.emit(hdr);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Egress                                                                                     */
/* ------------------------------------------------------------------------------------------ */

parser SwitchEgressParser(packet_in pkt,
                          out header_t hdr,
                          out egress_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(eg_md.bridged);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_VLAN : parse_vlan;
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control SwitchEgress(inout header_t hdr,
                     inout egress_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    Counter<bit<64>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) egress_port_counter;

    action set_smac(mac_addr_t smac) {
        hdr.ethernet.src_addr = smac;
    }

    table smac_rewrite {
        key = { eg_md.bridged.bd : exact; }
        actions = { set_smac; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    /* The frame leaves this port tagged with `vid`, or untagged. */
    action tag(bit<12> vid) {
        hdr.vlan.setValid();
        hdr.vlan.pcp = 0;
        hdr.vlan.dei = 0;
        hdr.vlan.vid = vid;
    }

    action untag() {
        hdr.vlan.setInvalid();
    }

    table vlan_xlate {
        key = {
            eg_intr_md.egress_port : exact;
            eg_md.bridged.bd       : exact;
        }
        actions = { tag; untag; }
        default_action = untag();
        size = 4096;
    }

    /* Wraps the frame (untagged) in Ethernet/IPv4/UDP/VXLAN. */
    action vxlan_encap(ipv4_addr_t sip, ipv4_addr_t dip, bit<24> vni, mac_addr_t outer_dmac,
                       mac_addr_t outer_smac) {
        hdr.inner_ethernet = hdr.ethernet;
        hdr.inner_ipv4 = hdr.ipv4;
        hdr.ipv4.setValid();
        hdr.ipv4.version = 4;
        hdr.ipv4.ihl = 5;
        hdr.ipv4.diffserv = 0;
        hdr.ipv4.total_len = hdr.inner_ipv4.total_len + 50;
        hdr.ipv4.identification = 0;
        hdr.ipv4.flags = 0;
        hdr.ipv4.frag_offset = 0;
        hdr.ipv4.ttl = 64;
        hdr.ipv4.protocol = IP_PROTOCOLS_UDP;
        hdr.ipv4.src_addr = sip;
        hdr.ipv4.dst_addr = dip;
        hdr.udp.setValid();
        hdr.udp.src_port = 49152;
        hdr.udp.dst_port = UDP_PORT_VXLAN;
        hdr.udp.length = hdr.inner_ipv4.total_len + 30;
        hdr.udp.checksum = 0;
        hdr.vxlan.setValid();
        hdr.vxlan.flags = 0x08;
        hdr.vxlan.reserved = 0;
        hdr.vxlan.vni = vni;
        hdr.vxlan.reserved2 = 0;
        hdr.ethernet.dst_addr = outer_dmac;
        hdr.ethernet.src_addr = outer_smac;
        hdr.ethernet.ether_type = ETHERTYPE_IPV4;
    }

    table tunnel_encap {
        key = { eg_md.bridged.tunnel : exact; }
        actions = { vxlan_encap; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        /* The frame as it came, untagged; the port's VLAN (or the tunnel) decides the rest. */
        if (hdr.vlan.isValid()) {
            hdr.ethernet.ether_type = hdr.vlan.ether_type;
            hdr.vlan.setInvalid();
        }
        if (eg_md.bridged.routed == 1) {
            smac_rewrite.apply();
        }
        if (eg_md.bridged.tunnel != 0) {
            tunnel_encap.apply();
        } else {
            vlan_xlate.apply();
            if (hdr.vlan.isValid()) {
                hdr.vlan.ether_type = hdr.ethernet.ether_type;
                hdr.ethernet.ether_type = ETHERTYPE_VLAN;
            }
        }
        egress_port_counter.count(eg_intr_md.egress_port);
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout header_t hdr,
                             in egress_metadata_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
