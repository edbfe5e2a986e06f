/* l2l3.p4 — a basic L2/L3 switch for Tofino (TNA), the program pisa's examples and benchmarks use.
 *
 * What it does, in the order the pipeline does it:
 *   ingress  - counts every packet per ingress port;
 *            - frames addressed to the router MAC carrying IPv4 are routed: LPM on the destination
 *              address picks a next hop, the next hop sets the destination MAC and the egress port,
 *              the TTL is decremented (packets with TTL <= 1 or a bad header checksum are dropped)
 *              and the IPv4 checksum is recomputed in the deparser;
 *            - other frames are switched: exact match on the destination MAC, unknown unicast
 *              floods through a multicast group that prunes the ingress port (PRE L2 exclusion id
 *              = ingress port);
 *            - a ternary ACL (addresses, protocol, L4 port ranges, ingress port) may deny, with a
 *              direct counter per ACL entry;
 *            - bridged metadata (ingress port, routed flag) travels to egress.
 *   egress   - routed packets get the egress port's router MAC as source MAC;
 *            - counts every packet per egress port.
 *
 * Tables are programmed by the control plane; p4/programs/l2l3.tables.yaml programs a small
 * four-host topology (see the comments there).
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<16> nexthop_id_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTOCOLS_TCP = 6;
const bit<8>  IP_PROTOCOLS_UDP = 17;

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
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

/* The first four bytes of TCP and UDP: enough for the ACL. */
header l4_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

/* Travels from the ingress deparser to the egress parser in front of the packet. */
header bridged_md_h {
    bit<7>   pad0;
    PortId_t ingress_port;
    bit<7>   pad1;
    bit<1>   routed;
}

struct header_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
    l4_ports_h l4;
}

struct ingress_metadata_t {
    bridged_md_h bridged;
    nexthop_id_t nexthop_id;
    bool         ipv4_checksum_err;
}

struct egress_metadata_t {
    bridged_md_h bridged;
}

/* ------------------------------------------------------------------------------------------ */
/* Ingress                                                                                    */
/* ------------------------------------------------------------------------------------------ */

parser TofinoIngressParser(packet_in pkt, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1 : parse_resubmit;
            0 : parse_port_metadata;
        }
    }

    /* l2l3.p4 never resubmits. */
    state parse_resubmit {
        transition accept;   /* `reject` would not drop on Tofino either */
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition accept;
    }
}

parser SwitchIngressParser(packet_in pkt,
                           out header_t hdr,
                           out ingress_metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;
    Checksum() ipv4_checksum;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
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
        ipv4_checksum.add(hdr.ipv4);
        ig_md.ipv4_checksum_err = ipv4_checksum.verify();
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTOCOLS_TCP) : parse_l4;
            (5, 0, IP_PROTOCOLS_UDP) : parse_l4;
            default : accept;
        }
    }

    state parse_l4 {
        pkt.extract(hdr.l4);
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

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    /* ---- L2 ---- */

    action set_port(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    /* Flood through a multicast group; the PRE prunes the ingress port, for which the control
     * plane keeps one L2 exclusion entry per port (xid = port -> {port}). */
    action flood(MulticastGroupId_t mgid) {
        ig_tm_md.mcast_grp_a = mgid;
        ig_tm_md.rid = 0;
        ig_tm_md.level2_exclusion_id = ig_intr_md.ingress_port;
    }

    table mac_dst {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            set_port;
            flood;
            drop;
        }
        default_action = flood(1);
        size = 4096;
    }

    /* ---- L3 ---- */

    table router_mac {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            NoAction;
        }
        size = 64;
    }

    action set_nexthop(nexthop_id_t nexthop_id) {
        ig_md.nexthop_id = nexthop_id;
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr : lpm;
        }
        actions = {
            set_nexthop;
            drop;
        }
        default_action = drop();
        size = 12288;
    }

    action forward_l3(mac_addr_t dmac, PortId_t port) {
        hdr.ethernet.dst_addr = dmac;
        ig_tm_md.ucast_egress_port = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        ig_md.bridged.routed = 1;
    }

    table nexthop {
        key = {
            ig_md.nexthop_id : exact;
        }
        actions = {
            forward_l3;
            drop;
        }
        default_action = drop();
        size = 4096;
    }

    /* ---- ACL ---- */

    action acl_permit() {
        acl_counter.count();
    }

    action acl_deny() {
        acl_counter.count();
        ig_dprsr_md.drop_ctl = 0x1;
    }

    table acl {
        key = {
            ig_intr_md.ingress_port : ternary;
            hdr.ipv4.src_addr       : ternary;
            hdr.ipv4.dst_addr       : ternary;
            hdr.ipv4.protocol       : ternary;
            hdr.l4.dst_port         : range;
        }
        actions = {
            acl_permit;
            acl_deny;
        }
        default_action = acl_permit();
        counters = acl_counter;
        size = 512;
    }

    apply {
        ingress_port_counter.count(ig_intr_md.ingress_port);
        ig_md.bridged.setValid();
        ig_md.bridged.ingress_port = ig_intr_md.ingress_port;
        ig_md.bridged.routed = 0;

        if (hdr.ipv4.isValid() && router_mac.apply().hit) {
            if (ig_md.ipv4_checksum_err || hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                ipv4_lpm.apply();
                nexthop.apply();
            }
        } else {
            mac_dst.apply();
        }

        if (hdr.ipv4.isValid()) {
            acl.apply();
        }
    }
}

control SwitchIngressDeparser(packet_out pkt,
                              inout header_t hdr,
                              in ingress_metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
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
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
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

    action rewrite_smac(mac_addr_t smac) {
        hdr.ethernet.src_addr = smac;
    }

    table port_smac {
        key = {
            eg_intr_md.egress_port : exact;
        }
        actions = {
            rewrite_smac;
            NoAction;
        }
        default_action = NoAction();
        size = 512;
    }

    apply {
        if (eg_md.bridged.routed == 1) {
            port_smac.apply();
        }
        egress_port_counter.count(eg_intr_md.egress_port);
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout header_t hdr,
                             in egress_metadata_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
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
