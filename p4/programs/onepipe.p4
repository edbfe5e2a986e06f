/* onepipe.p4 — 1Pipe's in-network barrier aggregation (SIGCOMM 2021, §4.1, §4.2, §6.2.1) on
 * fabric.p4's IPv4 routing with ECMP, for Tofino (TNA). Every switch of a 1Pipe fabric runs it.
 *
 * The 1Pipe header rides behind UDP destination port ONEPIPE_UDP_PORT:
 *     ts (48)       the message timestamp, set by the sender, never modified;
 *     be (32)       the best-effort barrier: a lower bound of ts and be of every later packet
 *                   on the same link;
 *     commit (32)   the commit barrier of reliable 1Pipe (§4.3), aggregated alike;
 *     psn (24), opcode (8)   DATA, ACK, COMMIT, BEACON, ...
 * Barriers are the low 32 bits of 48-bit nanosecond timestamps compared by serial arithmetic
 * (a - b as a signed 32-bit number), as PAWS does: a Tofino stateful ALU holds 32-bit words,
 * and a receiver extends a barrier to 48 bits against its own clock (valid while barriers lag
 * the clock by less than 2^31 ns). A switch rewrites barriers in the payload, which a RoCEv2
 * ICRC would cover and a Tofino cannot recompute over a payload; hence the UDP shim: the UDP
 * checksum of a rewritten packet is cleared (IPv4 allows 0).
 *
 * Barrier aggregation (§4.1, eq. 4.1). Each input link i of the switch (up to 32, numbered
 * by the control plane through table links) has a register R_i per barrier; a packet from link
 * i sets R_i := its barrier and leaves with min_j R_j. A stage can only take the minimum of
 * two words, so the registers form a binary tree over the links (§6.2.1): level k (k = 0..4)
 * is one register array of 32 >> (k + 1) pairs {left, right}; its cell n holds the minima of
 * the two subtrees of links n·2^(k+1) .. n·2^(k+1) + 2^(k+1) - 1. A packet from link i writes
 * its running value v into half (bit k of i) of cell i >> (k + 1) and carries on with
 * min(v, other half): after the five levels v = min over all links. Five MAU stages per tree
 * for a 32-port switch, as the paper counts; the two trees (best effort and commit) share the
 * stages, and `pisa check p4/programs/onepipe.p4 --target tofino1` prints the placement (9 of
 * Tofino 1's 12 ingress stages in all: the link lookup, the five levels, the output
 * registers, then the uplink lookup and the stamp).
 *
 * The control plane decides, per link and level, what the packet does (the mode in table
 * links, so the tree needs no branch it cannot take in one stage):
 *     WRITE_LEFT / WRITE_RIGHT  write its own half (bit k of the link number);
 *     WRITE_BOTH                the sibling subtree holds no live link (§4.2: a link silent
 *                               past the timeout is removed by the control plane): write both
 *                               halves, so the dead link no longer holds the minimum back;
 *     READ                      the link is joining (§4.2, addition of links): its packets
 *                               read the tree without writing, leave with the current output,
 *                               and record their barrier in link_be; the control plane turns
 *                               the link live once that barrier passes the output
 *                               (out_be), so the output never goes backwards.
 * Every 1Pipe packet from a link counts in link_packets[link] (a link whose count stops is
 * silent), writes its barriers to link_be / link_commit[link] and the output barrier to
 * out_be / out_commit.
 *
 * A BEACON from a neighbour (hop-by-hop, §4.2) updates the tree and is consumed here. A 1Pipe
 * packet from a port that is not a link (a miss in table links) is dropped: its barrier is
 * nobody's lower bound. Other traffic is routed as fabric.p4 routes it, barriers untouched.
 *
 * The up/down split (seed Figure 3, §4.1). Barriers need a DAG: in a fabric with links both
 * ways a switch whose output feeds back into its own input through a neighbour would hold
 * the lowest barrier ever seen forever. So each switch is two logical switches. The up switch
 * takes the links from below (hosts, the tier under it), numbered 0..15 by the control plane:
 * their minimum is the left subtree's, the running value after level 3 (be_up). The down
 * switch takes the links from above (16..31) and the up switch: the root. A packet leaving on
 * an uplink (table uplinks) carries the up switch's barriers, any other the down switch's; a
 * beacon takes both to egress in a bridged header and table neighbours picks per copy
 * (beacon_up on an uplink). 16 links per side: a 32-port switch of a k = 32 fat tree.
 *
 * Beacons of this switch (§4.2) come from Tofino's packet generator (pipeline::pktgen): a
 * periodic timer app whose buffer holds a beacon template (Ethernet, IPv4, UDP to
 * ONEPIPE_UDP_PORT, a 1Pipe header with opcode BEACON; the pktgen header overwrites the first
 * six bytes, the Ethernet destination). Its packets enter on the pipe's pktgen port (68 on
 * Tofino 1), which table links maps to generated(mgid): the packet reads the roots of both
 * trees (it writes nothing), takes them as its barriers and is replicated by multicast group
 * mgid to every link; egress table neighbours addresses each copy to the neighbour on its port
 * (MACs, IPv4 addresses, ts := be). The app's period is the beacon interval.
 *
 * Tables (in addition to fabric.p4's router_mac, routes, ecmp, ecmp_bits):
 *   SwitchIngress.links      ig_intr_md.ingress_port (exact)
 *                            -> set_link(link, m0, m1, m2, m3, m4)   modes per level, see above
 *                             | generated(mgid)                      the pktgen port
 *   SwitchIngress.uplinks    ig_tm_md.ucast_egress_port (exact) -> is_uplink()
 *   SwitchEgress.neighbours  eg_intr_md.egress_port (exact)
 *                            -> beacon_to(smac, dmac, src, dst)      a downlink
 *                             | beacon_up(smac, dmac, src, dst)      an uplink
 *                             | no_neighbour() (drop)
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<32> barrier_t;
typedef bit<8>  node_index_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTOCOLS_TCP = 6;
const bit<8>  IP_PROTOCOLS_UDP = 17;
const bit<16> ONEPIPE_UDP_PORT = 20304;   /* 0x4f50, "OP" */

const bit<8>  ONEPIPE_OP_BEACON = 4;
const bit<16> SEQUENCER_UDP_PORT = 20305;  /* the Fig. 8 baselines (hosts::onepipe::baselines) */

const bit<2>  MODE_WRITE_LEFT  = 0;
const bit<2>  MODE_WRITE_RIGHT = 1;
const bit<2>  MODE_WRITE_BOTH  = 2;
const bit<2>  MODE_READ        = 3;

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

header ipv4_option_word_h {
    bit<32> data;
}

header l4_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

/* The rest of the UDP header. */
header udp_rest_h {
    bit<16> length;
    bit<16> checksum;
}

header onepipe_h {
    bit<48>   ts;
    barrier_t be;
    barrier_t commit;
    bit<24>   psn;
    bit<8>    opcode;
}

/* The switch-sequencer baseline of Fig. 8: a scattering sent to the sequencer's address (all
 * its messages in one packet) gets a global sequence number and is multicast to every host. */
header seq_h {
    bit<32> gseq;
}

/* A beacon's up-switch barriers, from ingress to egress (our beacons only). */
header onepipe_up_h {
    barrier_t be_up;
    barrier_t commit_up;
}

struct header_t {
    ethernet_h             ethernet;
    ipv4_h                 ipv4;
    ipv4_option_word_h[10] ipv4_options;
    l4_ports_h             l4;
    udp_rest_h             udp;
    onepipe_h              onepipe;
    seq_h                  seq;
    onepipe_up_h           up;
}

/* Barrier pairs of one tree level: the minima of the left and the right subtree. */
struct barrier_pair_t {
    barrier_t left;
    barrier_t right;
}

struct ingress_metadata_t {
    bit<16> group;
    bit<4>  bucket;
    bit<16> hash;
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
    bit<1>  is_link;      /* the ingress port is one of table links' input links */
    bit<1>  is_gen;       /* a beacon from this switch's packet generator */
    node_index_t link;    /* its number, 0..31 */
    bit<2>  m0;           /* what the packet does at tree level k, MODE_* */
    bit<2>  m1;
    bit<2>  m2;
    bit<2>  m3;
    bit<2>  m4;
    node_index_t i0;      /* link >> (k + 1): its cell at level k */
    node_index_t i1;
    node_index_t i2;
    node_index_t i3;
    barrier_t be;         /* the running minimum of each tree */
    barrier_t commit;
    barrier_t be_up;      /* after level 3: the minimum over the links from below */
    barrier_t commit_up;
    bit<1>  going_up;     /* the packet leaves on an uplink (table uplinks) */
    bit<1>  multicast;    /* a sequenced packet on its way down (table sequencer) */
}

struct egress_header_t {
    ethernet_h   ethernet;
    ipv4_h       ipv4;
    l4_ports_h   l4;
    udp_rest_h   udp;
    onepipe_h    onepipe;
    onepipe_up_h up;
}

struct egress_metadata_t {
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

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        ig_md.group = 0;
        ig_md.bucket = 0;
        ig_md.l4_src_port = 0;
        ig_md.l4_dst_port = 0;
        ig_md.is_link = 0;
        ig_md.is_gen = 0;
        ig_md.going_up = 0;
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
        transition select(hdr.ipv4.ihl) {
            5  : parse_l4_select;
            6  : parse_ipv4_options_1;
            7  : parse_ipv4_options_2;
            8  : parse_ipv4_options_3;
            9  : parse_ipv4_options_4;
            10 : parse_ipv4_options_5;
            11 : parse_ipv4_options_6;
            12 : parse_ipv4_options_7;
            13 : parse_ipv4_options_8;
            14 : parse_ipv4_options_9;
            15 : parse_ipv4_options_10;
            default : accept;
        }
    }

    state parse_ipv4_options_10 { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_9; }
    state parse_ipv4_options_9  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_8; }
    state parse_ipv4_options_8  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_7; }
    state parse_ipv4_options_7  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_6; }
    state parse_ipv4_options_6  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_5; }
    state parse_ipv4_options_5  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_4; }
    state parse_ipv4_options_4  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_3; }
    state parse_ipv4_options_3  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_2; }
    state parse_ipv4_options_2  { pkt.extract(hdr.ipv4_options.next); transition parse_ipv4_options_1; }
    state parse_ipv4_options_1  { pkt.extract(hdr.ipv4_options.next); transition parse_l4_select; }

    state parse_l4_select {
        transition select(hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0 &&& 1, 0, IP_PROTOCOLS_TCP) : parse_l4;
            (0 &&& 1, 0, IP_PROTOCOLS_UDP) : parse_udp;
            default : accept;
        }
    }

    state parse_l4 {
        pkt.extract(hdr.l4);
        ig_md.l4_src_port = hdr.l4.src_port;
        ig_md.l4_dst_port = hdr.l4.dst_port;
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.l4);
        ig_md.l4_src_port = hdr.l4.src_port;
        ig_md.l4_dst_port = hdr.l4.dst_port;
        transition select(hdr.l4.dst_port) {
            ONEPIPE_UDP_PORT : parse_onepipe;
            SEQUENCER_UDP_PORT : parse_seq;
            default : accept;
        }
    }

    state parse_onepipe {
        pkt.extract(hdr.udp);
        pkt.extract(hdr.onepipe);
        transition accept;
    }

    state parse_seq {
        pkt.extract(hdr.udp);
        pkt.extract(hdr.seq);
        transition accept;
    }
}

/* One level of a barrier tree: a register array of pairs and its four actions. */
#define TREE_LEVEL(SIZE, REG, LEFT, RIGHT, BOTH, READ, VAL)                                 \
    Register<barrier_pair_t, node_index_t>(SIZE, {0, 0}) REG;                                 \
    RegisterAction<barrier_pair_t, node_index_t, barrier_t>(REG) LEFT = {                     \
        void apply(inout barrier_pair_t value, out barrier_t rv) {                            \
            value.left = VAL;                                                                 \
            if ((int<32>)(value.right - VAL) < 0) {                                           \
                rv = value.right;                                                             \
            } else {                                                                          \
                rv = VAL;                                                                     \
            }                                                                                 \
        }                                                                                     \
    };                                                                                        \
    RegisterAction<barrier_pair_t, node_index_t, barrier_t>(REG) RIGHT = {                    \
        void apply(inout barrier_pair_t value, out barrier_t rv) {                            \
            value.right = VAL;                                                                \
            if ((int<32>)(value.left - VAL) < 0) {                                            \
                rv = value.left;                                                              \
            } else {                                                                          \
                rv = VAL;                                                                     \
            }                                                                                 \
        }                                                                                     \
    };                                                                                        \
    RegisterAction<barrier_pair_t, node_index_t, barrier_t>(REG) BOTH = {                     \
        void apply(inout barrier_pair_t value, out barrier_t rv) {                            \
            value.left = VAL;                                                                 \
            value.right = VAL;                                                                \
            rv = VAL;                                                                         \
        }                                                                                     \
    };                                                                                        \
    RegisterAction<barrier_pair_t, node_index_t, barrier_t>(REG) READ = {                     \
        void apply(inout barrier_pair_t value, out barrier_t rv) {                            \
            if ((int<32>)(value.left - value.right) < 0) {                                    \
                rv = value.left;                                                              \
            } else {                                                                          \
                rv = value.right;                                                             \
            }                                                                                 \
        }                                                                                     \
    };

/* One step up a tree: the mode picks the action, the result is the next running minimum. */
#define TREE_STEP(MODE, INDEX, LEFT, RIGHT, BOTH, READ, VAL)                                \
    if (MODE == MODE_WRITE_LEFT) {                                                            \
        VAL = LEFT.execute(INDEX);                                                            \
    } else if (MODE == MODE_WRITE_RIGHT) {                                                    \
        VAL = RIGHT.execute(INDEX);                                                           \
    } else if (MODE == MODE_WRITE_BOTH) {                                                     \
        VAL = BOTH.execute(INDEX);                                                            \
    } else {                                                                                  \
        VAL = READ.execute(INDEX);                                                            \
    }

control SwitchIngress(inout header_t hdr,
                      inout ingress_metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    /* ---- routing: fabric.p4's, see there ---- */

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

    action forward(PortId_t port, mac_addr_t dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
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
        default_action = drop();
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
        default_action = drop();
        size = 4096;
    }

    /* ---- 1Pipe: input links ---- */

    action set_link(node_index_t link, bit<2> m0, bit<2> m1, bit<2> m2, bit<2> m3, bit<2> m4) {
        ig_md.is_link = 1;
        ig_md.link = link;
        ig_md.m0 = m0;
        ig_md.m1 = m1;
        ig_md.m2 = m2;
        ig_md.m3 = m3;
        ig_md.m4 = m4;
        ig_md.i0 = link >> 1;
        ig_md.i1 = link >> 2;
        ig_md.i2 = link >> 3;
        ig_md.i3 = link >> 4;
        ig_md.be = hdr.onepipe.be;
        ig_md.commit = hdr.onepipe.commit;
    }

    /* A packet of the beacon app (the pktgen port): it reads the roots of the trees and is
     * replicated to every link by multicast group `mgid`. */
    action generated(MulticastGroupId_t mgid) {
        ig_md.is_gen = 1;
        ig_md.m0 = MODE_READ;
        ig_md.m1 = MODE_READ;
        ig_md.m2 = MODE_READ;
        ig_md.m3 = MODE_READ;
        ig_md.m4 = MODE_READ;
        ig_md.i0 = 0;
        ig_md.i1 = 0;
        ig_md.i2 = 0;
        ig_md.i3 = 0;
        ig_tm_md.mcast_grp_a = mgid;
    }

    table links {
        key = {
            ig_intr_md.ingress_port : exact;
        }
        actions = {
            set_link;
            generated;
            NoAction;
        }
        default_action = NoAction();
        size = 32;
    }

    /* Packets per link: a link that brings none for the timeout is silent (§4.2). */
    Counter<bit<32>, node_index_t>(32, CounterType_t.PACKETS) link_packets;

    /* The last barriers each link brought: the control plane's view of the links. */
    Register<barrier_t, node_index_t>(32, 0) link_be;
    Register<barrier_t, node_index_t>(32, 0) link_commit;
    RegisterAction<barrier_t, node_index_t, barrier_t>(link_be) record_be = {
        void apply(inout barrier_t value) {
            value = ig_md.be;
        }
    };
    RegisterAction<barrier_t, node_index_t, barrier_t>(link_commit) record_commit = {
        void apply(inout barrier_t value) {
            value = ig_md.commit;
        }
    };

    /* The switch's output barriers (the roots of the trees), for the control plane. */
    Register<barrier_t, bit<1>>(1, 0) out_be;
    Register<barrier_t, bit<1>>(1, 0) out_commit;
    RegisterAction<barrier_t, bit<1>, barrier_t>(out_be) publish_be = {
        void apply(inout barrier_t value) {
            value = ig_md.be;
        }
    };
    RegisterAction<barrier_t, bit<1>, barrier_t>(out_commit) publish_commit = {
        void apply(inout barrier_t value) {
            value = ig_md.commit;
        }
    };

    TREE_LEVEL(16, be0, be0_left, be0_right, be0_both, be0_read, ig_md.be)
    TREE_LEVEL(8,  be1, be1_left, be1_right, be1_both, be1_read, ig_md.be)
    TREE_LEVEL(4,  be2, be2_left, be2_right, be2_both, be2_read, ig_md.be)
    TREE_LEVEL(2,  be3, be3_left, be3_right, be3_both, be3_read, ig_md.be)
    TREE_LEVEL(1,  be4, be4_left, be4_right, be4_both, be4_read, ig_md.be)
    TREE_LEVEL(16, cm0, cm0_left, cm0_right, cm0_both, cm0_read, ig_md.commit)
    TREE_LEVEL(8,  cm1, cm1_left, cm1_right, cm1_both, cm1_read, ig_md.commit)
    TREE_LEVEL(4,  cm2, cm2_left, cm2_right, cm2_both, cm2_read, ig_md.commit)
    TREE_LEVEL(2,  cm3, cm3_left, cm3_right, cm3_both, cm3_read, ig_md.commit)
    TREE_LEVEL(1,  cm4, cm4_left, cm4_right, cm4_both, cm4_read, ig_md.commit)

    /* The packet leaves with the barriers of the logical switch it leaves through (the down
     * switch's, or the up switch's on an uplink); its UDP checksum no longer holds. */
    action stamp() {
        hdr.onepipe.be = ig_md.be;
        hdr.onepipe.commit = ig_md.commit;
        hdr.udp.checksum = 0;
    }

    action stamp_up() {
        hdr.onepipe.be = ig_md.be_up;
        hdr.onepipe.commit = ig_md.commit_up;
        hdr.udp.checksum = 0;
    }

    /* A beacon takes both to egress, which picks per copy. */
    action bridge_up() {
        hdr.up.setValid();
        hdr.up.be_up = ig_md.be_up;
        hdr.up.commit_up = ig_md.commit_up;
    }

    action is_uplink() {
        ig_md.going_up = 1;
    }

    table uplinks {
        key = {
            ig_tm_md.ucast_egress_port : exact;
        }
        actions = {
            is_uplink;
            NoAction;
        }
        default_action = NoAction();
        size = 64;
    }

    /* ---- the switch-sequencer baseline (Fig. 8) ---- */

    Register<bit<32>, bit<1>>(1, 0) global_seq;
    RegisterAction<bit<32>, bit<1>, bit<32>>(global_seq) next_global = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    /* On the sequencer switch: a packet to the sequencer's address is numbered and multicast
     * (to group address group, MAC gmac) down to every host. */
    action sequence(MulticastGroupId_t mgid, ipv4_addr_t group, mac_addr_t gmac) {
        hdr.seq.gseq = next_global.execute(0);
        hdr.ipv4.dst_addr = group;
        hdr.ethernet.dst_addr = gmac;
        hdr.udp.checksum = 0;
        ig_tm_md.mcast_grp_a = mgid;
        ig_md.multicast = 1;
    }

    /* On every switch: a numbered packet (to the group address) goes on down to every host. */
    action replicate(MulticastGroupId_t mgid) {
        ig_tm_md.mcast_grp_a = mgid;
        ig_md.multicast = 1;
    }

    table sequencer {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            sequence;
            replicate;
            NoAction;
        }
        default_action = NoAction();
        size = 8;
    }

    action route() {
        ig_md.hash = ecmp_hash.get({
            hdr.ipv4.src_addr,
            hdr.ipv4.dst_addr,
            hdr.ipv4.protocol,
            ig_md.l4_src_port,
            ig_md.l4_dst_port});
    }

    apply {
        if (hdr.onepipe.isValid()) {
            links.apply();
            if (ig_md.is_link == 1 || ig_md.is_gen == 1) {
                if (ig_md.is_link == 1) {
                    link_packets.count(ig_md.link);
                    record_be.execute(ig_md.link);
                    record_commit.execute(ig_md.link);
                }
                TREE_STEP(ig_md.m0, ig_md.i0, be0_left, be0_right, be0_both, be0_read, ig_md.be)
                TREE_STEP(ig_md.m0, ig_md.i0, cm0_left, cm0_right, cm0_both, cm0_read, ig_md.commit)
                TREE_STEP(ig_md.m1, ig_md.i1, be1_left, be1_right, be1_both, be1_read, ig_md.be)
                TREE_STEP(ig_md.m1, ig_md.i1, cm1_left, cm1_right, cm1_both, cm1_read, ig_md.commit)
                TREE_STEP(ig_md.m2, ig_md.i2, be2_left, be2_right, be2_both, be2_read, ig_md.be)
                TREE_STEP(ig_md.m2, ig_md.i2, cm2_left, cm2_right, cm2_both, cm2_read, ig_md.commit)
                TREE_STEP(ig_md.m3, ig_md.i3, be3_left, be3_right, be3_both, be3_read, ig_md.be)
                TREE_STEP(ig_md.m3, ig_md.i3, cm3_left, cm3_right, cm3_both, cm3_read, ig_md.commit)
                ig_md.be_up = ig_md.be;
                ig_md.commit_up = ig_md.commit;
                TREE_STEP(ig_md.m4, 0, be4_left, be4_right, be4_both, be4_read, ig_md.be)
                TREE_STEP(ig_md.m4, 0, cm4_left, cm4_right, cm4_both, cm4_read, ig_md.commit)
                if (ig_md.is_link == 1) {
                    publish_be.execute(0);
                    publish_commit.execute(0);
                }
            }
        }

        if (ig_md.is_gen == 1) {
            /* a beacon of ours: multicast to the links (set in generated) */
        } else if (!hdr.ipv4.isValid()) {
            drop();
        } else if (hdr.onepipe.isValid() && ig_md.is_link == 0) {
            drop();                                   /* a barrier from no link */
        } else if (hdr.onepipe.isValid() && hdr.onepipe.opcode == ONEPIPE_OP_BEACON) {
            drop();                                   /* a neighbour's beacon ends here */
        } else if (!router_mac.apply().hit) {
            drop();
        } else if (hdr.ipv4.ttl <= 1 || hdr.ipv4.ihl < 5) {
            drop();
        } else {
            if (hdr.seq.isValid()) {
                sequencer.apply();
            }
            if (ig_md.multicast == 0) {
                route();
                ecmp_bits.apply();
                switch (routes.apply().action_run) {
                    to_group : {
                        ecmp.apply();
                    }
                }
            }
        }

        if (ig_md.is_gen == 1) {
            stamp();
            bridge_up();
        } else if (ig_md.is_link == 1) {
            uplinks.apply();
            if (ig_md.going_up == 1) {
                stamp_up();
            } else {
                stamp();
            }
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
            hdr.ipv4.dst_addr,
            hdr.ipv4_options[0].data,
            hdr.ipv4_options[1].data,
            hdr.ipv4_options[2].data,
            hdr.ipv4_options[3].data,
            hdr.ipv4_options[4].data,
            hdr.ipv4_options[5].data,
            hdr.ipv4_options[6].data,
            hdr.ipv4_options[7].data,
            hdr.ipv4_options[8].data,
            hdr.ipv4_options[9].data});

        pkt.emit(hdr);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Egress: beacons addressed to the neighbour of their port, other packets pass through        */
/* ------------------------------------------------------------------------------------------ */

parser SwitchEgressParser(packet_in pkt,
                          out egress_header_t hdr,
                          out egress_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }

    /* Only what a beacon is: Ethernet, IPv4 without options, UDP to ONEPIPE_UDP_PORT. */
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, IP_PROTOCOLS_UDP) : parse_udp;
            default : accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.l4);
        transition select(hdr.l4.dst_port) {
            ONEPIPE_UDP_PORT : parse_onepipe;
            default : accept;
        }
    }

    state parse_onepipe {
        pkt.extract(hdr.udp);
        pkt.extract(hdr.onepipe);
        transition select(hdr.onepipe.opcode) {
            ONEPIPE_OP_BEACON : parse_up;   /* only our own beacons reach egress */
            default : accept;
        }
    }

    state parse_up {
        pkt.extract(hdr.up);
        transition accept;
    }
}

control SwitchEgress(inout egress_header_t hdr,
                     inout egress_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* A beacon copy is addressed to the neighbour on its port (hop by hop, §4.2). */
    action beacon_to(mac_addr_t smac, mac_addr_t dmac, ipv4_addr_t src, ipv4_addr_t dst) {
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.src_addr = src;
        hdr.ipv4.dst_addr = dst;
        hdr.onepipe.ts = (bit<48>)hdr.onepipe.be;
        hdr.up.setInvalid();
    }

    /* An uplink: the neighbour above gets the up switch's barriers. */
    action beacon_up(mac_addr_t smac, mac_addr_t dmac, ipv4_addr_t src, ipv4_addr_t dst) {
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.src_addr = src;
        hdr.ipv4.dst_addr = dst;
        hdr.onepipe.ts = (bit<48>)hdr.up.be_up;
        hdr.onepipe.be = hdr.up.be_up;
        hdr.onepipe.commit = hdr.up.commit_up;
        hdr.up.setInvalid();
    }

    action no_neighbour() {
        eg_dprsr_md.drop_ctl = 0x1;
        hdr.up.setInvalid();
    }

    table neighbours {
        key = {
            eg_intr_md.egress_port : exact;
        }
        actions = {
            beacon_to;
            beacon_up;
            no_neighbour;
        }
        default_action = no_neighbour();
        size = 64;
    }

    apply {
        if (hdr.onepipe.isValid() && hdr.onepipe.opcode == ONEPIPE_OP_BEACON) {
            neighbours.apply();
        }
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout egress_header_t hdr,
                             in egress_metadata_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        if (hdr.onepipe.isValid()) {
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
