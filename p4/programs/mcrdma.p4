/* mcrdma.p4 — MC-RDMA's switch program (Huang et al., "MC-RDMA: Improving Replication
 * Performance of RDMA-based Distributed Systems with Reliable Multicast Support", §IV, §VI-B)
 * for Tofino (TNA): reliable RDMA multicast between unmodified RC queue pairs, with lazy
 * replication at bifurcation switches and ACK/NAK merging at the sender's ToR.
 *
 * It is also an IPv4 router with ECMP that follows fabric.p4's table contract exactly
 * (router_mac, routes, ecmp, ecmp_bits: same keys, actions and parameters), so it replaces
 * fabric.p4 on the ToRs of a lab and `labs::routes` fills its routing tables unchanged.
 * Differences from fabric.p4: IPv4 with options (ihl != 5) is dropped and counted here (RoCE
 * never carries options; fabric.p4 parses them); ECMP hashes the same 5-tuple.
 *
 * A multicast connection (§III-D, §IV-A): the sender QP (SRC, QPN_S) is connected to the
 * virtual peer <DST_1, MC_ID>; every receiver QP i (DST_i, QPN_i) to <SRC, QPN_S>; all start
 * at the same PSN. So:
 *   data      SRC -> DST_1, dst QP MC_ID     SEND/WRITE first/middle/last/only (+ immediate):
 *             on a bifurcation switch (table mc_group, key <SRC, MC_ID>) the PRE replicates the
 *             packet, one L1 node per next-hop group D_i of Algorithm 1 (RID = the branch); in
 *             egress each copy gets (table mc_copy on the RID) the next hop's MACs and
 *             destination IP D_i[0], and where D_i is one receiver (the last replication
 *             point) its QPN and, on FIRST/ONLY packets, the receiver's RETH VA and R_key
 *             (table mc_va: the sender's VA range as ternary prefixes, VA += offset; a Tofino
 *             range key is at most 20 bits, so the agent splits the 64-bit range into aligned
 *             blocks). A WRITE whose VA
 *             has no translation is dropped there. Switches with no rule route the packet by
 *             its destination like any other (no replication off the bifurcation points).
 *   ACK/NAK   DST_i -> SRC, dst QP QPN_S      merged in EGRESS at the port towards the sender
 *             (table ack_member, key <SRC, QPN_S, DST_i> -> group, slot, group size, DST_1):
 *             per slot one register holds the receiver's last acknowledged PSN; an ACK writes
 *             its own slot without reading it (the PSN a receiver acknowledges only grows) and
 *             the other slots are compared with it, one stage each, as a running minimum. The
 *             ACK reaches the sender only if it is the group minimum (it raised the minimum to
 *             its PSN), else it is dropped; a NAK stores NAK-1 in its slot and is forwarded
 *             with PSN := min{NAK-1, ACK_1..ACK_n} + 1 (§IV-C). RNR NAKs pass unmerged.
 *   CNP       DST_i -> SRC, dst QP QPN_S      re-addressed: source IP := DST_1 (§IV-D).
 *   Forwarded ACKs, NAKs and CNPs leave with source IP DST_1, the address the sender's QP is
 *   connected to.
 *   ECN: the TM queues decide (their RED thresholds are port configuration: DCQCN's Kmin, Kmax,
 *   Pmax) and egress marks an ECN-capable packet CE when its queue said so, as Tofino programs
 *   do with enq_congest_stat.
 *
 * Pipe isolation (§IV-C): the merge state lives in egress registers of the port towards the
 * sender, so every ACK of a group meets the same registers whichever pipe it came in on.
 *
 * PSN order: PSNs are 24 bits and wrap; the registers hold PSN << 8 in 32 bits, so the stateful
 * ALU's compare — a subtraction whose sign is tested, `(a - b) < 0` — orders them modulo 2^24
 * (a precedes b iff b is less than 2^23 ahead).
 *
 * Group size: MCRDMA_MAX_RECEIVERS slots per group (default 3 on Tofino 1, 7 on Tofino 2, the
 * paper's §VI-B sizes). Each slot is one register in one more egress stage of the chain;
 * `pisa check -D MCRDMA_MAX_RECEIVERS=N` shows where a larger group stops fitting.
 *
 * ICRC (see /work/shared/DESIGN.md "ICRC"): the switch rewrites IP addresses, QPN, PSN and RETH.
 *   - ACKs, NAKs and CNPs towards the sender are short and fully parsed: this program
 *     recomputes their ICRC with a CRC-32 Hash over the masked pseudo-header (as p4ce.p4).
 *     The sender keeps ICRC checking on.
 *   - Replicated data packets carry a payload the parser cannot reach: a Tofino cannot
 *     recompute their ICRC. They leave with the sender's (now stale) ICRC and the receivers'
 *     NICs run with ICRC checking off, as a ConnectX can be configured (pisa's endpoint has the
 *     same option). Data packets that are not rewritten keep a valid ICRC.
 * The IPv4 header checksum is recomputed in both deparsers; the UDP checksum of rewritten RoCE
 * packets is 0 (what RoCE NICs send).
 *
 * Security: a data packet to a receiver QP of a group (table rx_guard, key <DST_i, QPN_i>, and
 * <DST_1, MC_ID> on the sender's ToR) from another source IP than the group's sender is dropped
 * and counted in ingress, so a host outside the group cannot write through the switch.
 *
 * Tables the control plane fills (control::mcrdma does it per Algorithm 1):
 *   SwitchIngress.router_mac / routes / ecmp / ecmp_bits   as fabric.p4
 *   SwitchIngress.rx_guard   ipv4.dst_addr, bth.dst_qp (exact) -> guard(sender)
 *   SwitchIngress.mc_group   ipv4.src_addr, bth.dst_qp (exact) -> replicate(mgid)
 *   SwitchEgress.mc_copy     egress_rid (exact) -> to_branch(ip, smac, dmac)
 *                                                 | to_receiver(ip, smac, dmac, qpn)
 *   SwitchEgress.mc_va       egress_rid (exact), reth.va (ternary) -> translate(offset, rkey)
 *   SwitchEgress.ack_member  ipv4.dst_addr, bth.dst_qp, ipv4.src_addr (exact)
 *                                                 -> member(group, slot, size, dst1)
 *   SwitchEgress.acked0..N-1 registers, index = group: PSN << 8 (set to (PSN0 - 1) << 8 at setup)
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

#ifndef MCRDMA_MAX_RECEIVERS
#if __TARGET_TOFINO__ == 2
#define MCRDMA_MAX_RECEIVERS 7
#else
#define MCRDMA_MAX_RECEIVERS 3
#endif
#endif

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<24> qpn_t;
typedef bit<24> psn_t;
/* Multicast group index on the sender's ToR (the merge registers' index). */
typedef bit<16> mc_index_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTOCOLS_TCP = 6;
const bit<8>  IP_PROTOCOLS_UDP = 17;
const bit<16> UDP_PORT_ROCEV2 = 4791;

/* BTH opcodes (RC). 0x00..0x0B are the SEND and WRITE requests. */
const bit<8> RC_RDMA_WRITE_FIRST = 0x06;
const bit<8> RC_RDMA_WRITE_ONLY = 0x0A;
const bit<8> RC_RDMA_WRITE_ONLY_WITH_IMM = 0x0B;
const bit<8> RC_LAST_DATA_OPCODE = 0x0B;
const bit<8> RC_ACKNOWLEDGE = 0x11;
const bit<8> CNP_OPCODE = 0x81;

/* AETH syndrome types (bits 6..5). */
const bit<2> AETH_ACK = 0;
const bit<2> AETH_NAK = 3;

/* What the ingress decided, carried to egress in the bridged header. */
const bit<8> KIND_PLAIN    = 0;
const bit<8> KIND_MC       = 1;   /* a replicated data packet */
const bit<8> KIND_FEEDBACK = 2;   /* an ACK, NAK or CNP (merge candidates) */

/* Ingress drop reasons (`SwitchIngress.drops`). */
const bit<8> DROP_NOT_IPV4     = 0;
const bit<8> DROP_NOT_MY_MAC   = 1;
const bit<8> DROP_TTL          = 2;  /* TTL expires here, or ihl != 5 */
const bit<8> DROP_NO_ROUTE     = 3;
const bit<8> DROP_NOT_SENDER   = 4;  /* data to a group's receiver QP from another host */

/* Egress drop reasons (`SwitchEgress.drops`). */
const bit<8> EG_DROP_NO_BRANCH = 0;  /* a copy whose RID has no mc_copy entry */
const bit<8> EG_DROP_NO_VA     = 1;  /* a WRITE FIRST/ONLY outside the receiver's translation */
const bit<8> EG_DROP_MERGED    = 2;  /* an ACK that is not the group minimum (by design) */

const bit<32> MC_GROUPS = 4096;

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

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* The first four bytes of TCP: the ports, for the ECMP hash. */
header tcp_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

/* InfiniBand Base Transport Header, 12 bytes. */
header bth_h {
    bit<8>  opcode;
    bit<1>  se;
    bit<1>  migreq;
    bit<2>  pad_count;
    bit<4>  tver;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  resv6;
    qpn_t   dst_qp;
    bit<1>  ack_req;
    bit<7>  resv7;
    psn_t   psn;
}

/* RDMA Extended Transport Header: on WRITE FIRST and WRITE ONLY (with or without immediate). */
header reth_h {
    bit<64> va;
    bit<32> rkey;
    bit<32> dma_len;
}

/* ACK Extended Transport Header. */
header aeth_h {
    bit<1>  resv;
    bit<2>  syndrome_type;
    bit<5>  value;
    bit<24> msn;
}

/* The 16 reserved bytes of a CNP. */
header cnp_h {
    bit<64> rsvd0;
    bit<64> rsvd1;
}

/* The ICRC of an ACK or CNP (parsed only there), in wire order: the CRC's low byte first. */
header icrc_h {
    bit<8> b0;
    bit<8> b1;
    bit<8> b2;
    bit<8> b3;
}

/* Travels from the ingress deparser to the egress parser in front of the packet. */
header bridged_md_h {
    bit<8> kind;
}

struct header_t {
    ethernet_h  ethernet;
    ipv4_h      ipv4;
    udp_h       udp;
    tcp_ports_h tcp;
    bth_h       bth;
    reth_h      reth;
    aeth_h      aeth;
    cnp_h       cnp;
    icrc_h      icrc;
}

struct ingress_metadata_t {
    bridged_md_h bridged;
    bit<16>      group;        /* the ECMP group routes chose (to_group) */
    bit<4>       bucket;
    bit<16>      hash;
    bit<16>      l4_src_port;
    bit<16>      l4_dst_port;
    bit<1>       is_data;
    bit<1>       guarded;
    ipv4_addr_t  guard_sender;
    ipv4_addr_t  sender_diff;
    bit<1>       replicate;
    bit<1>       drop;
    bit<8>       drop_reason;
}

struct egress_metadata_t {
    bridged_md_h bridged;
    bit<1>       last_hop;     /* mc_copy addressed the copy to one receiver */
    bit<1>       member;       /* ack_member hit */
    bit<1>       merge;        /* an ACK or NAK to merge */
    bit<1>       is_nak;
    mc_index_t   mc_group;
    bit<8>       slot;
    bit<8>       size;
    ipv4_addr_t  dst1;
    bit<32>      psn_key;      /* PSN << 8 this packet acknowledges */
    bit<32>      run_min;      /* running minimum over the slots */
    bit<32>      min_diff;     /* run_min XOR psn_key: 0 when this ACK is the minimum */
    bit<32>      icrc;
    bit<1>       drop;
    bit<8>       drop_reason;
}

/* ------------------------------------------------------------------------------------------ */
/* Parsing, shared by both gresses                                                            */
/* ------------------------------------------------------------------------------------------ */

parser RoceParser(packet_in pkt, inout header_t hdr) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    /* Only ihl = 5 and non-fragments (MF clear, offset 0) reach the L4 headers. */
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0 &&& 1, 0, IP_PROTOCOLS_UDP) : parse_udp;
            (5, 0 &&& 1, 0, IP_PROTOCOLS_TCP) : parse_tcp;
            default : accept;
        }
    }

    state parse_tcp {
        pkt.extract(hdr.tcp);
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            UDP_PORT_ROCEV2 : parse_bth;
            default : accept;
        }
    }

    state parse_bth {
        pkt.extract(hdr.bth);
        transition select(hdr.bth.opcode) {
            RC_RDMA_WRITE_FIRST : parse_reth;
            RC_RDMA_WRITE_ONLY : parse_reth;
            RC_RDMA_WRITE_ONLY_WITH_IMM : parse_reth;
            RC_ACKNOWLEDGE : parse_aeth;
            CNP_OPCODE : parse_cnp;
            default : accept;
        }
    }

    state parse_reth {
        pkt.extract(hdr.reth);
        transition accept;
    }

    state parse_aeth {
        pkt.extract(hdr.aeth);
        pkt.extract(hdr.icrc);
        transition accept;
    }

    state parse_cnp {
        pkt.extract(hdr.cnp);
        pkt.extract(hdr.icrc);
        transition accept;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Ingress: routing, the receivers' guard, replication                                        */
/* ------------------------------------------------------------------------------------------ */

parser SwitchIngressParser(packet_in pkt,
                           out header_t hdr,
                           out ingress_metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    RoceParser() roce_parser;

    state start {
        ig_md.group = 0;
        ig_md.bucket = 0;
        ig_md.l4_src_port = 0;
        ig_md.l4_dst_port = 0;
        ig_md.is_data = 0;
        ig_md.guarded = 0;
        ig_md.replicate = 0;
        ig_md.drop = 0;
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1 : accept;   /* mcrdma.p4 never resubmits (`reject` would not drop on Tofino either) */
            0 : parse_port_metadata;
        }
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        roce_parser.apply(pkt, hdr);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr,
                      inout ingress_metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;

    /* Why packets were dropped (DROP_* above). */
    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) drops;
    /* Data packets this switch replicated, per PRE group. */
    Counter<bit<32>, bit<16>>(MC_GROUPS, CounterType_t.PACKETS_AND_BYTES) replicated;

    action drop(bit<8> reason) {
        ig_md.drop = 1;
        ig_md.drop_reason = reason;
    }

    action drop_now() {
        ig_dprsr_md.drop_ctl = 0x1;
        drops.count(ig_md.drop_reason);
    }

    /* ---- my MACs (fabric.p4's contract) ---- */

    action routable() {
    }

    table router_mac {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            routable;
            NoAction;
        }
        default_action = NoAction();
        size = 64;
    }

    /* ---- routes (fabric.p4's contract) ---- */

    action forward(PortId_t port, mac_addr_t dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dmac;
    }

    action to_host(PortId_t port, mac_addr_t dmac) {
        forward(port, dmac);
    }

    action to_group(bit<16> group) {
        ig_md.group = group;
    }

    table routes {
        key = {
            hdr.ipv4.dst_addr : lpm;
        }
        actions = {
            to_host;
            to_group;
            drop;
        }
        default_action = drop(DROP_NO_ROUTE);
        size = 8192;
    }

    action to_nexthop(PortId_t port, mac_addr_t dmac) {
        forward(port, dmac);
    }

    action bucket_bits_0() { ig_md.bucket = ig_md.hash[3:0]; }
    action bucket_bits_1() { ig_md.bucket = ig_md.hash[7:4]; }
    action bucket_bits_2() { ig_md.bucket = ig_md.hash[11:8]; }
    action bucket_bits_3() { ig_md.bucket = ig_md.hash[15:12]; }

    table ecmp_bits {
        actions = {
            bucket_bits_0;
            bucket_bits_1;
            bucket_bits_2;
            bucket_bits_3;
        }
        default_action = bucket_bits_0();
        size = 1;
    }

    table ecmp {
        key = {
            ig_md.group  : exact;
            ig_md.bucket : exact;
        }
        actions = {
            to_nexthop;
            drop;
        }
        default_action = drop(DROP_NO_ROUTE);
        size = 4096;
    }

    action decrement_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* The L4 ports of the ECMP hash: those of TCP and UDP (non-fragments), else 0. */
    action udp_ports() {
        ig_md.l4_src_port = hdr.udp.src_port;
        ig_md.l4_dst_port = hdr.udp.dst_port;
    }

    action tcp_ports() {
        ig_md.l4_src_port = hdr.tcp.src_port;
        ig_md.l4_dst_port = hdr.tcp.dst_port;
    }

    /* ---- MC-RDMA: the receivers' guard ---- */

    action guard(ipv4_addr_t sender) {
        ig_md.guarded = 1;
        ig_md.guard_sender = sender;
    }

    table rx_guard {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.bth.dst_qp    : exact;
        }
        actions = {
            guard;
            NoAction;
        }
        default_action = NoAction();
        size = 4096;
    }

    /* An XOR tested against 0: gateways compare with constants. */
    action compare_sender() {
        ig_md.sender_diff = hdr.ipv4.src_addr ^ ig_md.guard_sender;
    }

    /* ---- MC-RDMA: replication at a bifurcation switch ---- */

    action replicate(MulticastGroupId_t mgid) {
        ig_md.replicate = 1;
        ig_tm_md.mcast_grp_a = mgid;
        ig_md.bridged.kind = KIND_MC;
        replicated.count(mgid);
    }

    table mc_group {
        key = {
            hdr.ipv4.src_addr : exact;
            hdr.bth.dst_qp    : exact;
        }
        actions = {
            replicate;
            NoAction;
        }
        default_action = NoAction();
        size = 16384;
    }

    apply {
        ig_md.bridged.setValid();
        ig_md.bridged.kind = KIND_PLAIN;

        if (hdr.bth.isValid()) {
            if (hdr.bth.opcode <= RC_LAST_DATA_OPCODE) {
                ig_md.is_data = 1;
            } else {
                ig_md.bridged.kind = KIND_FEEDBACK;
            }
        }

        if (!hdr.ipv4.isValid()) {
            drop(DROP_NOT_IPV4);
        } else if (!router_mac.apply().hit) {
            drop(DROP_NOT_MY_MAC);
        } else if (hdr.ipv4.ttl <= 1 || hdr.ipv4.ihl != 5) {
            drop(DROP_TTL);
        } else {
            decrement_ttl();
            if (hdr.udp.isValid()) {
                udp_ports();
            } else if (hdr.tcp.isValid()) {
                tcp_ports();
            }
            ig_md.hash = ecmp_hash.get({
                hdr.ipv4.src_addr,
                hdr.ipv4.dst_addr,
                hdr.ipv4.protocol,
                ig_md.l4_src_port,
                ig_md.l4_dst_port});
            ecmp_bits.apply();
            if (ig_md.is_data == 1) {
                rx_guard.apply();
                compare_sender();
                mc_group.apply();
            }
            if (ig_md.guarded == 1 && ig_md.sender_diff != 0) {
                drop(DROP_NOT_SENDER);
            } else if (ig_md.replicate == 0) {
                switch (routes.apply().action_run) {
                    to_group : {
                        ecmp.apply();
                    }
                }
            }
        }

        if (ig_md.drop == 1) {
            drop_now();
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
/* Egress: per-copy rewrite, ACK/NAK merging, CNP re-addressing                               */
/* ------------------------------------------------------------------------------------------ */

parser SwitchEgressParser(packet_in pkt,
                          out header_t hdr,
                          out egress_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    RoceParser() roce_parser;

    state start {
        eg_md.last_hop = 0;
        eg_md.member = 0;
        eg_md.merge = 0;
        eg_md.is_nak = 0;
        eg_md.drop = 0;
        pkt.extract(eg_intr_md);
        pkt.extract(eg_md.bridged);
        roce_parser.apply(pkt, hdr);
        transition accept;
    }
}

control SwitchEgress(inout header_t hdr,
                     inout egress_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    Counter<bit<32>, bit<8>>(4, CounterType_t.PACKETS) drops;
    /* Per group on the sender's ToR: ACKs and NAKs forwarded to the sender, CNPs re-addressed. */
    Counter<bit<32>, mc_index_t>(MC_GROUPS, CounterType_t.PACKETS) acks_forwarded;
    Counter<bit<32>, mc_index_t>(MC_GROUPS, CounterType_t.PACKETS) naks_forwarded;
    Counter<bit<32>, mc_index_t>(MC_GROUPS, CounterType_t.PACKETS) cnps_forwarded;

    action drop(bit<8> reason) {
        eg_md.drop = 1;
        eg_md.drop_reason = reason;
    }

    action drop_now() {
        eg_dprsr_md.drop_ctl = 0x1;
        drops.count(eg_md.drop_reason);
    }

    /* ---- Per-copy rewrite (Algorithm 1, lines 18-23) ---- */

    /* A copy for a next-hop group of several receivers: addressed to its first one; a
     * downstream bifurcation switch replicates it again. */
    action to_branch(ipv4_addr_t ip, mac_addr_t smac, mac_addr_t dmac) {
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.checksum = 0;
    }

    /* The last replication point of a receiver: its address and QPN. */
    action to_receiver(ipv4_addr_t ip, mac_addr_t smac, mac_addr_t dmac, qpn_t qpn) {
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.checksum = 0;
        hdr.bth.dst_qp = qpn;
        eg_md.last_hop = 1;
    }

    table mc_copy {
        key = {
            eg_intr_md.egress_rid : exact;
        }
        actions = {
            to_branch;
            to_receiver;
            drop;
        }
        default_action = drop(EG_DROP_NO_BRANCH);
        size = 16384;
    }

    /* §IV-E: the sender's VA becomes the receiver's (VA + offset, mod 2^64), with its R_key. */
    action translate(bit<64> offset, bit<32> rkey) {
        hdr.reth.va = hdr.reth.va + offset;
        hdr.reth.rkey = rkey;
    }

    table mc_va {
        key = {
            eg_intr_md.egress_rid : exact;
            hdr.reth.va           : ternary;
        }
        actions = {
            translate;
            drop;
        }
        default_action = drop(EG_DROP_NO_VA);
        size = 1024;
    }

    /* ---- ACK/NAK merging and CNP re-addressing at the sender's ToR (§IV-C, §IV-D) ---- */

    action member(mc_index_t group, bit<8> slot, bit<8> size, ipv4_addr_t dst1) {
        eg_md.member = 1;
        eg_md.mc_group = group;
        eg_md.slot = slot;
        eg_md.size = size;
        eg_md.dst1 = dst1;
    }

    table ack_member {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.bth.dst_qp    : exact;
            hdr.ipv4.src_addr : exact;
        }
        actions = {
            member;
            NoAction;
        }
        default_action = NoAction();
        size = 16384;
    }

    /* An ACK acknowledges its PSN; a NAK everything before its PSN. */
    action key_ack() {
        eg_md.merge = 1;
        eg_md.psn_key = hdr.bth.psn ++ 8w0;
    }

    action key_nak() {
        eg_md.merge = 1;
        eg_md.is_nak = 1;
        eg_md.psn_key = (hdr.bth.psn ++ 8w0) - 256;
    }

    action start_min() {
        eg_md.run_min = eg_md.psn_key;
    }

#define MCRDMA_SLOT(REG, STORE, OBSERVE)                                                                     \
    Register<bit<32>, mc_index_t>(MC_GROUPS, 0) REG;                                     \
    RegisterAction<bit<32>, mc_index_t, bit<32>>(REG) STORE = {                       \
        void apply(inout bit<32> value) {                                                     \
            value = eg_md.psn_key;                                                            \
        }                                                                                     \
    };                                                                                        \
    RegisterAction<bit<32>, mc_index_t, bit<32>>(REG) OBSERVE = {                     \
        void apply(inout bit<32> value, out bit<32> rv) {                                     \
            if ((int<32>)(value - eg_md.run_min) < 0) {                                       \
                rv = value;                                                                   \
            } else {                                                                          \
                rv = eg_md.run_min;                                                           \
            }                                                                                 \
        }                                                                                     \
    };

#define MCRDMA_STEP(K, STORE, OBSERVE)                                                                     \
    if (eg_md.slot == K) {                                                                    \
        STORE.execute(eg_md.mc_group);                                                     \
    } else if (eg_md.size > K) {                                                              \
        eg_md.run_min = OBSERVE.execute(eg_md.mc_group);                                   \
    }

    MCRDMA_SLOT(acked0, store0, observe0)
#if MCRDMA_MAX_RECEIVERS > 1
    MCRDMA_SLOT(acked1, store1, observe1)
#endif
#if MCRDMA_MAX_RECEIVERS > 2
    MCRDMA_SLOT(acked2, store2, observe2)
#endif
#if MCRDMA_MAX_RECEIVERS > 3
    MCRDMA_SLOT(acked3, store3, observe3)
#endif
#if MCRDMA_MAX_RECEIVERS > 4
    MCRDMA_SLOT(acked4, store4, observe4)
#endif
#if MCRDMA_MAX_RECEIVERS > 5
    MCRDMA_SLOT(acked5, store5, observe5)
#endif
#if MCRDMA_MAX_RECEIVERS > 6
    MCRDMA_SLOT(acked6, store6, observe6)
#endif
#if MCRDMA_MAX_RECEIVERS > 7
    MCRDMA_SLOT(acked7, store7, observe7)
#endif
#if MCRDMA_MAX_RECEIVERS > 8
#error "mcrdma.p4 spells out at most 8 receiver slots"
#endif

    /* The NAK goes back to the merged expected PSN: min{NAK - 1, ACKs} + 1. */
    action rewrite_nak() {
        hdr.bth.psn = eg_md.run_min[31:8] + 1;
        naks_forwarded.count(eg_md.mc_group);
    }

    /* A gateway compares with a constant: the equality becomes an XOR tested against 0. */
    action compare_min() {
        eg_md.min_diff = eg_md.run_min ^ eg_md.psn_key;
    }

    action count_ack() {
        acks_forwarded.count(eg_md.mc_group);
    }

    action count_cnp() {
        cnps_forwarded.count(eg_md.mc_group);
    }

    /* The sender's QP is connected to DST_1: everything it gets comes from there. */
    action readdress() {
        hdr.ipv4.src_addr = eg_md.dst1;
        hdr.udp.checksum = 0;
    }

    Hash<bit<32>>(HashAlgorithm_t.CRC32) icrc_ack_hash;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) icrc_cnp_hash;

    /* The ICRC over the masked pseudo-header (8 bytes of ones, IPv4 with TOS, TTL and
     * checksum as ones, UDP with its checksum as ones, BTH with byte 4 as ones). */
    action compute_icrc_ack() {
        eg_md.icrc = icrc_ack_hash.get({
            64w0xFFFFFFFFFFFFFFFF,
            hdr.ipv4.version, hdr.ipv4.ihl, 8w0xFF, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            8w0xFF, hdr.ipv4.protocol, 16w0xFFFF, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
            hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length, 16w0xFFFF,
            hdr.bth.opcode, hdr.bth.se, hdr.bth.migreq, hdr.bth.pad_count, hdr.bth.tver,
            hdr.bth.pkey, 8w0xFF, hdr.bth.dst_qp, hdr.bth.ack_req, hdr.bth.resv7, hdr.bth.psn,
            hdr.aeth.resv, hdr.aeth.syndrome_type, hdr.aeth.value, hdr.aeth.msn});
    }

    action compute_icrc_cnp() {
        eg_md.icrc = icrc_cnp_hash.get({
            64w0xFFFFFFFFFFFFFFFF,
            hdr.ipv4.version, hdr.ipv4.ihl, 8w0xFF, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            8w0xFF, hdr.ipv4.protocol, 16w0xFFFF, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
            hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length, 16w0xFFFF,
            hdr.bth.opcode, hdr.bth.se, hdr.bth.migreq, hdr.bth.pad_count, hdr.bth.tver,
            hdr.bth.pkey, 8w0xFF, hdr.bth.dst_qp, hdr.bth.ack_req, hdr.bth.resv7, hdr.bth.psn,
            hdr.cnp.rsvd0, hdr.cnp.rsvd1});
    }

    /* The CRC goes on the wire least significant byte first. */
    action write_icrc() {
        hdr.icrc.b0 = eg_md.icrc[7:0];
        hdr.icrc.b1 = eg_md.icrc[15:8];
        hdr.icrc.b2 = eg_md.icrc[23:16];
        hdr.icrc.b3 = eg_md.icrc[31:24];
    }

    /* DCQCN's congestion point (§II-B, §IV-D): the TM's RED-style decision for this queue
     * (enq_congest_stat, from the port's ECN thresholds) marks ECN-capable packets CE. */
    action mark_ce() {
        hdr.ipv4.diffserv[1:0] = 3;
    }

    apply {
        if (hdr.ipv4.isValid() && eg_intr_md.enq_congest_stat != 0 && hdr.ipv4.diffserv[1:0] != 0) {
            mark_ce();
        }
        if (eg_md.bridged.kind == KIND_MC) {
            mc_copy.apply();
            if (eg_md.last_hop == 1 && hdr.reth.isValid()) {
                mc_va.apply();
            }
        } else if (eg_md.bridged.kind == KIND_FEEDBACK) {
            ack_member.apply();
            if (eg_md.member == 1 && hdr.aeth.isValid()) {
                if (hdr.aeth.syndrome_type == AETH_ACK) {
                    key_ack();
                } else if (hdr.aeth.syndrome_type == AETH_NAK) {
                    key_nak();
                }
            }
        }

        if (eg_md.merge == 1) {
            start_min();
            MCRDMA_STEP(0, store0, observe0)
#if MCRDMA_MAX_RECEIVERS > 1
            MCRDMA_STEP(1, store1, observe1)
#endif
#if MCRDMA_MAX_RECEIVERS > 2
            MCRDMA_STEP(2, store2, observe2)
#endif
#if MCRDMA_MAX_RECEIVERS > 3
            MCRDMA_STEP(3, store3, observe3)
#endif
#if MCRDMA_MAX_RECEIVERS > 4
            MCRDMA_STEP(4, store4, observe4)
#endif
#if MCRDMA_MAX_RECEIVERS > 5
            MCRDMA_STEP(5, store5, observe5)
#endif
#if MCRDMA_MAX_RECEIVERS > 6
            MCRDMA_STEP(6, store6, observe6)
#endif
#if MCRDMA_MAX_RECEIVERS > 7
            MCRDMA_STEP(7, store7, observe7)
#endif
            compare_min();
            if (eg_md.is_nak == 1) {
                rewrite_nak();
            } else if (eg_md.min_diff == 0) {
                count_ack();
            } else {
                drop(EG_DROP_MERGED);
            }
        }

        if (eg_md.member == 1 && eg_md.drop == 0) {
            readdress();
            if (hdr.aeth.isValid()) {
                compute_icrc_ack();
                write_icrc();
            } else if (hdr.cnp.isValid()) {
                count_cnp();
                compute_icrc_cnp();
                write_icrc();
            }
        }

        if (eg_md.drop == 1) {
            drop_now();
        }
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout header_t hdr,
                             in egress_metadata_t eg_md,
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
