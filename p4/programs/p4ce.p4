/* p4ce.p4 — P4CE's switch program (Dulong et al., "P4CE: Consensus over RDMA at Line Speed",
 * ICDCS 2024, §IV) for Tofino (TNA): the switch replicates a leader's RDMA WRITEs to the replicas
 * of a communication group and aggregates their ACKs, so that the leader talks to one RoCEv2
 * peer (the switch) while f replicas + the leader form a majority.
 *
 * Roles of the packets (RoCEv2 = Ethernet / IPv4 / UDP 4791 / BTH [/ RETH | AETH]):
 *   leader -> switch IP, BCast QP    RDMA WRITE FIRST/MIDDLE/LAST/ONLY (+ with-immediate forms):
 *                                    scattered (§IV-B): multicast to the group's replicas, one copy
 *                                    per PRE node whose RID is the replica's endpoint id;
 *                                    NumRecv[group][PSN mod 256] is reset; in egress each copy is
 *                                    rewritten for its replica (Ethernet, IP, UDP, BTH DestQP, PSN
 *                                    moved into the replica's PSN space, RETH VA = replica VA +
 *                                    offset and the replica's R_key on FIRST/ONLY packets).
 *   replica -> switch IP, Aggr QP    ACK: counted in NumRecv (§IV-C), once per replica and PSN
 *                                    (Acked<slot> remembers who answered; a replica's repeated
 *                                    ACK of a PSN is dropped uncounted); all but the ACK of the
 *                                    f-th replica of a PSN are dropped in the replica's INGRESS
 *                                    (the paper's parser bottleneck note, §IV-D); that one is
 *                                    rewritten into the leader's QP, PSN and MSN space, its
 *                                    credit field set to the group's MinCredit, and sent to the
 *                                    leader.
 *                                    NAK / RNR NAK: rewritten the same way and sent at once.
 *   anything -> switch IP, QP1       RDMA CM MADs (ConnectRequest, ...) go to the CPU port, where
 *                                    the P4CE agent (control/) sets groups up (§IV-A).
 *   everything else                  plain L2 forwarding on the destination MAC (heartbeats, the
 *                                    unicast fallback of the hosts, CM between hosts).
 *
 * Security (§III: only the current leader may write): a WRITE to a BCast QP from another source
 * IP than the group's leader, with another R_key than the group's virtual R_key, or outside the
 * group's virtual buffer is dropped in ingress and counted; it never reaches a replica and never
 * touches NumRecv.
 *
 * MinCredit (§IV-C, §IV-D): the last credit code each replica announced is kept in one register
 * per replica slot (MAX_REPLICAS = 4 slots per group). The minimum is computed as a chain through
 * those registers, one stage each: every register's stateful ALU compares its stored value with
 * the running minimum carried in PHV (`value < ig_md.min_credit`, the SALU's compare of memory
 * against a PHV input: a subtract and a test of the sign, which is what the paper's
 * "subtract and test the borrow" does by hand) and outputs the smaller one. Credit codes are
 * monotonic in the credits they stand for (IBA table: 0 -> 0 ... 30 -> 32768, 31 = unlimited),
 * so the minimum code is the code of the minimum credit; 31 is the neutral value unused slots
 * hold (the registers' initial value; the agent writes 31 into a slot it frees).
 *
 * ICRC (see /work/shared/DESIGN.md "ICRC"): the switch rewrites IP addresses, DestQP, PSN, RETH
 * and AETH, which invalidates the ICRC the sender computed.
 *   - ACKs and NAKs towards the leader are short and fully parsed (BTH + AETH + ICRC), so this
 *     program recomputes their ICRC with a Hash over the standard CRC-32 (the IEEE polynomial,
 *     reflected, init and final xor all ones, i.e. what zlib computes) on the masked pseudo-header:
 *     8 bytes of 0xFF, the IPv4 header with TOS, TTL and checksum as ones, the UDP header with
 *     its checksum as ones, the BTH with byte 4 (FECN/BECN/resv6) as ones, and the AETH. The
 *     CRC goes on the wire least significant byte first. The leader can keep ICRC checking on.
 *   - Scattered WRITEs carry an arbitrary payload the parser cannot reach, so their ICRC cannot
 *     be recomputed on a Tofino: the copies leave with the leader's (now stale) ICRC and the
 *     deployment turns ICRC checking off on the replicas' NICs, as SwitchML had to on
 *     ConnectX NICs. pisa's RDMA endpoint has that option, like a ConnectX.
 *
 * Known limits, as in the paper: ACKs are counted per exact PSN, so replicas must coalesce ACKs
 * at the same PSNs (NICs ACK the packets with AckReq set, the last one of each message); at most
 * 256 PSNs of a group may be in flight (the leader keeps to that: hosts::p4ce::PSN_WINDOW); the
 * switch does not translate CNPs. Only IPv4 without options is handled. The IPv4 header
 * checksum of RoCE packets is verified in the parser and recomputed in the deparsers of the
 * packets the switch rewrites; the UDP checksum of rewritten packets is set to 0 (allowed for
 * IPv4, what RoCE NICs send).
 *
 * p4/programs/p4ce.tables.yaml programs an example group (a leader and two replicas).
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<24> qpn_t;
typedef bit<24> psn_t;
/* Communication group index (Table II's per-group metadata is indexed by it). */
typedef bit<8>  group_id_t;
/* Endpoint identifier (§IV-A: an 8-bit integer); 16 bits wide because it is the PRE's RID. */
typedef bit<16> endpoint_id_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTOCOLS_UDP = 17;
const bit<16> UDP_PORT_ROCEV2 = 4791;

/* BTH opcodes (RC transport) the parser and the pipeline distinguish. */
const bit<8> RC_RDMA_WRITE_FIRST = 0x06;
const bit<8> RC_RDMA_WRITE_LAST_WITH_IMM = 0x09;
const bit<8> RC_RDMA_WRITE_ONLY = 0x0A;
const bit<8> RC_RDMA_WRITE_ONLY_WITH_IMM = 0x0B;
const bit<8> RC_ACKNOWLEDGE = 0x11;

/* AETH syndrome type (bits 6..5): 0 = ACK (value = credit code), 1 = RNR NAK, 3 = NAK. */
const bit<2> AETH_ACK = 0;

/* Credit code meaning "unlimited / unknown": the neutral element of the minimum. */
const bit<8> CREDIT_UNLIMITED = 31;

/* What the switch_qp table said about a packet addressed to the switch. */
const bit<8> ROLE_NONE  = 0;
const bit<8> ROLE_BCAST = 1;
const bit<8> ROLE_AGGR  = 2;
const bit<8> ROLE_CPU   = 3;

/* What the ingress decided, carried to egress in the bridged header. */
const bit<8> KIND_PLAIN     = 0;
const bit<8> KIND_SCATTER   = 1;
const bit<8> KIND_TO_LEADER = 2;

/* Index of the ingress drop counter (`SwitchIngress.drops`). */
const bit<8> DROP_NO_L2_ENTRY   = 0;  /* unknown destination MAC                           */
const bit<8> DROP_NOT_LEADER    = 1;  /* WRITE to a BCast QP from another host than its leader */
const bit<8> DROP_BAD_RKEY      = 2;  /* WRITE FIRST/ONLY with another R_key than the group's  */
const bit<8> DROP_OUT_OF_BOUNDS = 3;  /* WRITE outside the group's virtual buffer             */
const bit<8> DROP_BAD_OPCODE    = 4;  /* not a WRITE to a BCast QP, not an ACK to an Aggr QP  */
const bit<8> DROP_NOT_REPLICA   = 5;  /* ACK to an Aggr QP from a host outside the group      */
const bit<8> DROP_AGGREGATED    = 6;  /* an ACK that is not the f-th of its PSN (by design)   */
const bit<8> DROP_BAD_CHECKSUM  = 7;  /* RoCE packet to the switch with a bad IPv4 checksum   */
const bit<8> DROP_NO_LEADER     = 8;  /* the group's leader endpoint has no connection entry  */
const bit<8> DROP_DUPLICATE_ACK = 9;  /* an ACK of a PSN its replica had acknowledged already */

/* Index of the egress drop counter (`SwitchEgress.drops`). */
const bit<8> EG_DROP_NO_CONNECTION = 0;  /* a scattered copy whose RID has no connection entry */

const bit<32> MAX_GROUPS = 256;
/* NumRecv and Acked: 256 PSNs in flight per group (§IV-C), index = group ++ PSN[7:0]. */
const bit<32> NUM_RECV_CELLS = 65536;

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

/* ACK Extended Transport Header; for an ACK `value` is the credit code, for NAKs the reason. */
header aeth_h {
    bit<1>  resv;
    bit<2>  syndrome_type;
    bit<5>  value;
    bit<24> msn;
}

/* The ICRC that ends an ACK (parsed only there), in wire order: the CRC's low byte first. */
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
    ethernet_h ethernet;
    ipv4_h     ipv4;
    udp_h      udp;
    bth_h      bth;
    reth_h     reth;
    aeth_h     aeth;
    icrc_h     icrc;
}

struct ingress_metadata_t {
    bridged_md_h  bridged;
    bool          ipv4_checksum_err;
    bit<8>        role;
    group_id_t    group;
    /* BCast side (from switch_qp). */
    ipv4_addr_t   leader_ip;
    bit<32>       vrkey;
    bit<64>       vsize;
    bit<64>       va_end;
    bit<64>       room;
    bit<32>       src_diff;
    bit<32>       rkey_diff;
    bit<1>        scatter;
    /* Aggr side (from switch_qp and aggr_replica). */
    bit<8>        quorum;
    endpoint_id_t leader_ep;
    bit<1>        replica_known;
    bit<8>        slot;
    psn_t         psn_delta;
    bit<24>       msn_delta;
    bit<1>        is_ack;
    bit<8>        acks;
    bit<1>        acked_before;
    bit<8>        credit;
    bit<8>        min_credit;
    bit<1>        to_leader;
    bit<16>       num_recv_idx;
    bit<32>       icrc;
    bit<1>        drop;
    bit<8>        drop_reason;
}

struct egress_metadata_t {
    bridged_md_h bridged;
    bit<64>      va_base;
    bit<32>      rkey;
}

/* ------------------------------------------------------------------------------------------ */
/* Parsing, shared by both gresses                                                            */
/* ------------------------------------------------------------------------------------------ */

parser RoceParser(packet_in pkt, inout header_t hdr, out bool ipv4_checksum_err) {
    Checksum() ipv4_checksum;

    state start {
        ipv4_checksum_err = false;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        ipv4_checksum_err = ipv4_checksum.verify();
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTOCOLS_UDP) : parse_udp;
            default : accept;
        }
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
}

/* ------------------------------------------------------------------------------------------ */
/* Ingress                                                                                    */
/* ------------------------------------------------------------------------------------------ */

parser SwitchIngressParser(packet_in pkt,
                           out header_t hdr,
                           out ingress_metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    RoceParser() roce_parser;

    state start {
        /* The pipeline's decisions start from "nothing decided" (set here, so the first MAU
         * stage is free for the group lookup). */
        ig_md.role = ROLE_NONE;
        ig_md.scatter = 0;
        ig_md.to_leader = 0;
        ig_md.is_ack = 0;
        ig_md.replica_known = 0;
        ig_md.acked_before = 0;
        ig_md.drop = 0;
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1 : accept;   /* p4ce.p4 never resubmits (`reject` would not drop on Tofino either) */
            0 : parse_port_metadata;
        }
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        roce_parser.apply(pkt, hdr, ig_md.ipv4_checksum_err);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr,
                      inout ingress_metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    /* Why packets were dropped (DROP_* above). */
    Counter<bit<32>, bit<8>>(16, CounterType_t.PACKETS) drops;
    /* Per group: WRITE packets scattered, ACKs forwarded to the leader, NAKs forwarded. */
    Counter<bit<32>, group_id_t>(MAX_GROUPS, CounterType_t.PACKETS_AND_BYTES) writes_scattered;
    Counter<bit<32>, group_id_t>(MAX_GROUPS, CounterType_t.PACKETS) acks_forwarded;
    Counter<bit<32>, group_id_t>(MAX_GROUPS, CounterType_t.PACKETS) naks_forwarded;

    /* Decisions to drop are collected in metadata and carried out once, at the end, where the
     * drop counter lives (an indexed counter sits in one stage). */
    action drop(bit<8> reason) {
        ig_md.drop = 1;
        ig_md.drop_reason = reason;
    }

    action drop_now() {
        ig_dprsr_md.drop_ctl = 0x1;
        drops.count(ig_md.drop_reason);
    }

    /* ---- Communication groups (§IV-A, Table II) ----
     * Keyed on the switch's IP and a QPN the switch handed out: the BCast QP of a group (the
     * leader's side), the Aggr QP of a group (the replicas' side), or QP1 (CM MADs). */

    action bcast(group_id_t group, MulticastGroupId_t mgid, ipv4_addr_t leader_ip,
                 bit<32> vrkey, bit<64> vsize) {
        ig_md.role = ROLE_BCAST;
        ig_md.group = group;
        ig_tm_md.mcast_grp_a = mgid;
        ig_md.leader_ip = leader_ip;
        ig_md.vrkey = vrkey;
        ig_md.vsize = vsize;
        ig_md.va_end = hdr.reth.va + (bit<64>)hdr.reth.dma_len;
    }

    action aggr(group_id_t group, bit<8> quorum, endpoint_id_t leader_ep) {
        ig_md.role = ROLE_AGGR;
        ig_md.group = group;
        ig_md.quorum = quorum;
        ig_md.leader_ep = leader_ep;
    }

    action to_cpu(PortId_t cpu_port) {
        ig_md.role = ROLE_CPU;
        ig_tm_md.ucast_egress_port = cpu_port;
    }

    table switch_qp {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.bth.dst_qp    : exact;
        }
        actions = {
            bcast;
            aggr;
            to_cpu;
            NoAction;
        }
        default_action = NoAction();
        size = 1024;
    }

    /* ---- Replica connections, seen from the ACK side (Table III) ----
     * Keyed on the Aggr QP and the replica's IP: the replica's credit slot and the offsets that
     * move its PSNs and MSNs into the leader's spaces (replica = leader + delta, mod 2^24). */

    action from_replica(bit<8> slot, psn_t psn_delta, bit<24> msn_delta) {
        ig_md.replica_known = 1;
        ig_md.slot = slot;
        ig_md.psn_delta = psn_delta;
        ig_md.msn_delta = msn_delta;
        ig_md.credit = (bit<8>)hdr.aeth.value;
        ig_md.min_credit = (bit<8>)hdr.aeth.value;
    }

    table aggr_replica {
        key = {
            hdr.bth.dst_qp    : exact;
            hdr.ipv4.src_addr : exact;
        }
        actions = {
            from_replica;
            NoAction;
        }
        default_action = NoAction();
        size = 1024;
    }

    /* ---- Leader connections (Table III), indexed by endpoint id ---- */

    action to_leader(mac_addr_t mac, ipv4_addr_t ip, qpn_t qpn, bit<16> udp_sport,
                     PortId_t port) {
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = mac;
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.src_port = udp_sport;
        hdr.udp.checksum = 0;
        hdr.bth.dst_qp = qpn;
        ig_tm_md.ucast_egress_port = port;
        ig_md.bridged.kind = KIND_TO_LEADER;
    }

    table conn_leader {
        key = {
            ig_md.leader_ep : exact;
        }
        actions = {
            to_leader;
            drop;
        }
        default_action = drop(DROP_NO_LEADER);
        size = 256;
    }

    /* The ACK's PSN and MSN in the leader's spaces. */
    action translate_ack() {
        hdr.bth.psn = hdr.bth.psn - ig_md.psn_delta;
        hdr.aeth.msn = hdr.aeth.msn - ig_md.msn_delta;
    }

    /* ---- Scatter (§IV-B) ---- */

    action scatter() {
        ig_md.scatter = 1;
        ig_md.bridged.kind = KIND_SCATTER;
        writes_scattered.count(ig_md.group);
    }

    /* Gateways compare with constants: the source and R_key checks become XORs tested
     * against 0, the bounds check a subtraction whose sign bit is tested. */
    action check_write() {
        ig_md.room = ig_md.vsize - ig_md.va_end;
        ig_md.src_diff = hdr.ipv4.src_addr ^ ig_md.leader_ip;
        ig_md.rkey_diff = hdr.reth.rkey ^ ig_md.vrkey;
    }

    /* ---- NumRecv (Table II): replicas that acknowledged (group, leader PSN mod 256) ----
     * §IV-C: "receiving f acknowledgments ensures that strictly more than half of the servers
     * agree on the value (the f replicas + the leader)": f *replicas*, so NumRecv counts each
     * replica once per PSN. Acked<slot>[group ++ PSN] remembers which replica slots already
     * acknowledged the PSN (one 1-bit register per slot, like the credit registers: a 1-bit
     * stateful ALU sets a bit and outputs its old value); a replica's repeated ACK of the same
     * PSN (its NIC re-ACKs a duplicated or retransmitted WRITE) is dropped without counting.
     * A scattered WRITE clears the PSN's count and bits. */

    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) num_recv_index;

    action make_num_recv_index() {
        ig_md.num_recv_idx = num_recv_index.get({ig_md.group, hdr.bth.psn[7:0]});
    }

    Register<bit<8>, bit<16>>(NUM_RECV_CELLS, 0) num_recv;

    RegisterAction<bit<8>, bit<16>, bit<8>>(num_recv) num_recv_reset = {
        void apply(inout bit<8> value) {
            value = 0;
        }
    };

    RegisterAction<bit<8>, bit<16>, bit<8>>(num_recv) num_recv_count = {
        void apply(inout bit<8> value, out bit<8> rv) {
            value = value |+| 1;
            rv = value;
        }
    };

    Register<bit<1>, bit<16>>(NUM_RECV_CELLS, 0) acked0;
    Register<bit<1>, bit<16>>(NUM_RECV_CELLS, 0) acked1;
    Register<bit<1>, bit<16>>(NUM_RECV_CELLS, 0) acked2;
    Register<bit<1>, bit<16>>(NUM_RECV_CELLS, 0) acked3;

    RegisterAction<bit<1>, bit<16>, bit<1>>(acked0) clear_acked0 = {
        void apply(inout bit<1> value) {
            value = 0;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked0) mark_acked0 = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 1;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked1) clear_acked1 = {
        void apply(inout bit<1> value) {
            value = 0;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked1) mark_acked1 = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 1;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked2) clear_acked2 = {
        void apply(inout bit<1> value) {
            value = 0;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked2) mark_acked2 = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 1;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked3) clear_acked3 = {
        void apply(inout bit<1> value) {
            value = 0;
        }
    };
    RegisterAction<bit<1>, bit<16>, bit<1>>(acked3) mark_acked3 = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 1;
        }
    };

    /* ---- MinCredit (Table II): last credit code per replica slot, per group ----
     * `store` writes the ACK's credit into the sender's own slot (the running minimum already
     * holds it); `observe` reads another slot and outputs min(slot, running minimum). */

    Register<bit<8>, group_id_t>(MAX_GROUPS, CREDIT_UNLIMITED) credit0;
    Register<bit<8>, group_id_t>(MAX_GROUPS, CREDIT_UNLIMITED) credit1;
    Register<bit<8>, group_id_t>(MAX_GROUPS, CREDIT_UNLIMITED) credit2;
    Register<bit<8>, group_id_t>(MAX_GROUPS, CREDIT_UNLIMITED) credit3;

    RegisterAction<bit<8>, group_id_t, bit<8>>(credit0) store0 = {
        void apply(inout bit<8> value) {
            value = ig_md.credit;
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit0) observe0 = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value < ig_md.min_credit) {
                rv = value;
            } else {
                rv = ig_md.min_credit;
            }
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit1) store1 = {
        void apply(inout bit<8> value) {
            value = ig_md.credit;
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit1) observe1 = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value < ig_md.min_credit) {
                rv = value;
            } else {
                rv = ig_md.min_credit;
            }
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit2) store2 = {
        void apply(inout bit<8> value) {
            value = ig_md.credit;
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit2) observe2 = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value < ig_md.min_credit) {
                rv = value;
            } else {
                rv = ig_md.min_credit;
            }
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit3) store3 = {
        void apply(inout bit<8> value) {
            value = ig_md.credit;
        }
    };
    RegisterAction<bit<8>, group_id_t, bit<8>>(credit3) observe3 = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value < ig_md.min_credit) {
                rv = value;
            } else {
                rv = ig_md.min_credit;
            }
        }
    };

    /* The forwarded ACK announces the group's minimum credit. */
    action set_min_credit() {
        hdr.aeth.value = ig_md.min_credit[4:0];
        acks_forwarded.count(ig_md.group);
    }

    action count_nak() {
        naks_forwarded.count(ig_md.group);
    }

    /* ---- ICRC of the packets to the leader (short and fully parsed) ---- */

    Hash<bit<32>>(HashAlgorithm_t.CRC32) icrc_hash;

    action compute_icrc() {
        ig_md.icrc = icrc_hash.get({
            64w0xFFFFFFFFFFFFFFFF,
            hdr.ipv4.version, hdr.ipv4.ihl, 8w0xFF, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            8w0xFF, hdr.ipv4.protocol, 16w0xFFFF, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
            hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length, 16w0xFFFF,
            hdr.bth.opcode, hdr.bth.se, hdr.bth.migreq, hdr.bth.pad_count, hdr.bth.tver,
            hdr.bth.pkey, 8w0xFF, hdr.bth.dst_qp, hdr.bth.ack_req, hdr.bth.resv7, hdr.bth.psn,
            hdr.aeth.resv, hdr.aeth.syndrome_type, hdr.aeth.value, hdr.aeth.msn});
    }

    /* The CRC goes on the wire least significant byte first. */
    action write_icrc() {
        hdr.icrc.b0 = ig_md.icrc[7:0];
        hdr.icrc.b1 = ig_md.icrc[15:8];
        hdr.icrc.b2 = ig_md.icrc[23:16];
        hdr.icrc.b3 = ig_md.icrc[31:24];
    }

    /* ---- Everything else: L2 ---- */

    action l2_port(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    table l2_forward {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            l2_port;
            drop;
        }
        default_action = drop(DROP_NO_L2_ENTRY);
        size = 4096;
    }

    apply {
        ig_md.bridged.setValid();
        ig_md.bridged.kind = KIND_PLAIN;

        if (hdr.bth.isValid()) {
            switch_qp.apply();
            aggr_replica.apply();
        }

        if (ig_md.role == ROLE_NONE) {
            l2_forward.apply();
        } else if (ig_md.ipv4_checksum_err) {
            drop(DROP_BAD_CHECKSUM);
        } else if (ig_md.role == ROLE_BCAST) {
            /* Scatter: only the leader's WRITEs, with the virtual R_key, inside the buffer. */
            check_write();
            if (hdr.bth.opcode < RC_RDMA_WRITE_FIRST || hdr.bth.opcode > RC_RDMA_WRITE_ONLY_WITH_IMM) {
                drop(DROP_BAD_OPCODE);
            } else if (ig_md.src_diff != 0) {
                drop(DROP_NOT_LEADER);
            } else if (hdr.reth.isValid() && ig_md.rkey_diff != 0) {
                drop(DROP_BAD_RKEY);
            } else if (hdr.reth.isValid() && (hdr.reth.va[63:32] != 0 || ig_md.room[63:63] == 1)) {
                drop(DROP_OUT_OF_BOUNDS);
            } else {
                scatter();
            }
        } else if (ig_md.role == ROLE_AGGR) {
            /* Gather: ACKs are counted, NAKs go through. */
            if (!hdr.aeth.isValid()) {
                drop(DROP_BAD_OPCODE);
            } else if (ig_md.replica_known == 0) {
                drop(DROP_NOT_REPLICA);
            } else {
                translate_ack();
                conn_leader.apply();
                if (hdr.aeth.syndrome_type == AETH_ACK) {
                    ig_md.is_ack = 1;
                } else {
                    ig_md.to_leader = 1;
                    count_nak();
                }
            }
        }

        /* NumRecv[group][PSN] and Acked<slot>[group][PSN]: cleared by a scattered WRITE; an
         * ACK sets its replica's bit and counts only if the bit was clear. */
        if (ig_md.scatter == 1 || ig_md.is_ack == 1) {
            make_num_recv_index();
        }
        if (ig_md.scatter == 1) {
            clear_acked0.execute(ig_md.num_recv_idx);
            clear_acked1.execute(ig_md.num_recv_idx);
            clear_acked2.execute(ig_md.num_recv_idx);
            clear_acked3.execute(ig_md.num_recv_idx);
        } else if (ig_md.is_ack == 1) {
            if (ig_md.slot == 0) {
                ig_md.acked_before = mark_acked0.execute(ig_md.num_recv_idx);
            } else if (ig_md.slot == 1) {
                ig_md.acked_before = mark_acked1.execute(ig_md.num_recv_idx);
            } else if (ig_md.slot == 2) {
                ig_md.acked_before = mark_acked2.execute(ig_md.num_recv_idx);
            } else if (ig_md.slot == 3) {
                ig_md.acked_before = mark_acked3.execute(ig_md.num_recv_idx);
            }
        }
        if (ig_md.scatter == 1) {
            num_recv_reset.execute(ig_md.num_recv_idx);
        } else if (ig_md.is_ack == 1 && ig_md.acked_before == 0) {
            ig_md.acks = num_recv_count.execute(ig_md.num_recv_idx);
        }

        /* MinCredit chain, on every ACK (also the ones that will be dropped). */
        if (ig_md.is_ack == 1) {
            if (ig_md.slot == 0) {
                store0.execute(ig_md.group);
            } else {
                ig_md.min_credit = observe0.execute(ig_md.group);
            }
            if (ig_md.slot == 1) {
                store1.execute(ig_md.group);
            } else {
                ig_md.min_credit = observe1.execute(ig_md.group);
            }
            if (ig_md.slot == 2) {
                store2.execute(ig_md.group);
            } else {
                ig_md.min_credit = observe2.execute(ig_md.group);
            }
            if (ig_md.slot == 3) {
                store3.execute(ig_md.group);
            } else {
                ig_md.min_credit = observe3.execute(ig_md.group);
            }
            /* Only the ACK of the f-th replica of a PSN reaches the leader. */
            if (ig_md.acked_before == 1) {
                drop(DROP_DUPLICATE_ACK);
            } else if (ig_md.acks == ig_md.quorum) {
                ig_md.to_leader = 1;
                set_min_credit();
            } else {
                drop(DROP_AGGREGATED);
            }
        }

        if (ig_md.to_leader == 1) {
            compute_icrc();
            write_icrc();
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
        if (ig_md.bridged.kind == KIND_TO_LEADER) {
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
    RoceParser() roce_parser;
    bool unused_checksum_err;

    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(eg_md.bridged);
        roce_parser.apply(pkt, hdr, unused_checksum_err);
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

    action drop(bit<8> reason) {
        eg_dprsr_md.drop_ctl = 0x1;
        drops.count(reason);
    }

    /* ---- Replica connections (Table III), chosen by the PRE's RID = endpoint id (§IV-B) ----
     * Every copy leaves as if the switch had sent it: source MAC/IP = the switch's (the
     * leader addressed the switch), the replica's MAC, IP and QPN, the UDP source port of the
     * connection, and the PSN moved into the replica's space. The size of the replica's buffer
     * (Table III) is enforced once per group in ingress: the agent gives the leader a virtual
     * buffer as large as the smallest replica log (bcast's vsize), so a WRITE is either inside
     * every replica's log or dropped before replication, never accepted by some replicas only. */

    action to_replica(mac_addr_t mac, ipv4_addr_t ip, qpn_t qpn, bit<16> udp_sport,
                      psn_t psn_delta, bit<64> va, bit<32> rkey) {
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = mac;
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.src_port = udp_sport;
        hdr.udp.checksum = 0;
        hdr.bth.dst_qp = qpn;
        hdr.bth.psn = hdr.bth.psn + psn_delta;
        eg_md.va_base = va;
        eg_md.rkey = rkey;
    }

    table conn_replica {
        key = {
            eg_intr_md.egress_rid : exact;
        }
        actions = {
            to_replica;
            drop;
        }
        default_action = drop(EG_DROP_NO_CONNECTION);
        size = 256;
    }

    /* FIRST/ONLY: the leader's offset in the virtual buffer becomes an address in the
     * replica's log, and the virtual R_key the replica's. */
    action rewrite_reth() {
        hdr.reth.va = hdr.reth.va + eg_md.va_base;
        hdr.reth.rkey = eg_md.rkey;
    }

    apply {
        if (eg_md.bridged.kind == KIND_SCATTER) {
            if (conn_replica.apply().hit) {
                if (hdr.reth.isValid()) {
                    rewrite_reth();
                }
            }
        }
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout header_t hdr,
                             in egress_metadata_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        if (eg_md.bridged.kind == KIND_SCATTER) {
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
        }
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
