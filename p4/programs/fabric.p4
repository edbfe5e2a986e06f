/* fabric.p4 — an IPv4 router for multi-switch fabrics (leaf-spine, fat tree) with ECMP, for
 * Tofino (TNA). Every switch of the fabric runs this same program; only the table state differs.
 *
 * What it does, in the order the pipeline does it:
 *   ingress  - frames that are not IPv4 are dropped;
 *            - a frame is routed only if its destination MAC is one of this switch's router MACs
 *              (table router_mac), otherwise it is dropped;
 *            - a frame with TTL <= 1 (or a malformed header, ihl < 5) is dropped;
 *            - LPM on the destination address (table routes) either
 *                * to_host(port, dmac):   the host is attached to this switch: send it there, or
 *                * to_group(group):       the destination is reached through an ECMP group of
 *                                         next hops (uplinks / downlinks to other switches), or
 *                * drop():                the default, so a miss is dropped;
 *            - for a group, table ecmp picks the member by (group, bucket), see ECMP below;
 *            - a routed frame gets source MAC := the destination MAC it arrived with (the router
 *              MAC it was sent to, i.e. "my MAC"), destination MAC := the next hop's / host's
 *              MAC; TTL - 1; the IPv4 header checksum is recomputed in the deparser (Checksum).
 *   egress   - pass-through.
 *
 * ECMP: the selection is spelled out (an explicit hash and a (group, bucket) table, so the
 * control plane decides each bucket's member; switch.p4 uses an ActionSelector). A CRC16 hash
 * (HashAlgorithm_t.CRC16 = CRC-16/ARC: poly 0x8005, reflected, init 0, xor 0) over the 5-tuple
 *     { ipv4.src_addr, ipv4.dst_addr, ipv4.protocol, L4 src port, L4 dst port }
 * (13 bytes, in this order; the ports are 0 unless the packet is TCP or UDP and not a fragment,
 * so every fragment of a datagram takes the same path) gives ig_md.hash; table ecmp_bits picks
 * which nibble of it is ig_md.bucket (hash[3:0] by default; another per tier against ECMP
 * polarization, see ecmp_bits). Table
 * ecmp matches (group, bucket) exactly: for a group with members m0..m(n-1) the control plane
 * installs 16 entries, bucket b -> member b % n. One flow always takes the same member; flows
 * spread over the members (evenly when n divides 16). Beware: the low 4 bits of CRC-16/ARC see
 * little of any one input byte (flows that differ only in the low byte of the source port land
 * in just 2 buckets, those that differ only in one address byte in 8), so a handful of flows
 * from one host may share a member; a 2-member group is still split by the bucket's parity.
 *
 * IPv4 options are parsed (up to the 40 bytes ihl allows) so that the recomputed header checksum
 * covers them; the L4 ports of a packet with options are still used.
 *
 * Tables a control plane fills (p4/programs/fabric.tables.yaml is a small example;
 * `pisa lab tables TOPOLOGY` generates the state of every switch of a lab topology):
 *   SwitchIngress.router_mac  hdr.ethernet.dst_addr (exact)        -> routable()
 *   SwitchIngress.routes      hdr.ipv4.dst_addr (lpm)              -> to_host(port, dmac)
 *                                                                   | to_group(group) | drop()
 *   SwitchIngress.ecmp        ig_md.group, ig_md.bucket (exact)    -> to_nexthop(port, dmac)
 *   SwitchIngress.ecmp_bits   (keyless; default action)            -> bucket_bits_0..3()
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

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

/* One 32-bit word of IPv4 options (ihl - 5 of them). */
header ipv4_option_word_h {
    bit<32> data;
}

/* The first four bytes of TCP and UDP: the ports, for the ECMP hash. */
header l4_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

struct header_t {
    ethernet_h            ethernet;
    ipv4_h                ipv4;
    ipv4_option_word_h[10] ipv4_options;
    l4_ports_h            l4;
}

struct ingress_metadata_t {
    bit<16> group;        /* the ECMP group routes chose (to_group) */
    bit<4>  bucket;       /* 4 bits of the 5-tuple hash, which 4 set by table ecmp_bits */
    bit<16> hash;         /* the 5-tuple hash */
    bit<16> l4_src_port;  /* the L4 ports, or 0 */
    bit<16> l4_dst_port;
}

struct egress_header_t {
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

    /* fabric.p4 never resubmits. */
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
            default : accept;   /* ihl < 5: malformed, the control drops it */
        }
    }

    /* parse_ipv4_options_N: N option words are left to extract. */
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

    /* The L4 ports only of TCP/UDP packets that are not fragments (MF clear, offset 0): the
     * fragments of one datagram then all hash alike. */
    state parse_l4_select {
        transition select(hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0 &&& 1, 0, IP_PROTOCOLS_TCP) : parse_l4;
            (0 &&& 1, 0, IP_PROTOCOLS_UDP) : parse_l4;
            default : accept;
        }
    }

    state parse_l4 {
        pkt.extract(hdr.l4);
        ig_md.l4_src_port = hdr.l4.src_port;
        ig_md.l4_dst_port = hdr.l4.dst_port;
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

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    /* ---- my MACs ---- */

    /* A marker: the frame was sent to one of this switch's router MACs. */
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

    /* ---- routes ---- */

    /* Sends the frame out of `port` to `dmac`: "my MAC" (the destination MAC the frame came
     * with) becomes the source MAC, and the TTL is decremented (the checksum follows in the
     * deparser). */
    action forward(PortId_t port, mac_addr_t dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* The destination host is attached to this switch, on `port`. */
    action to_host(PortId_t port, mac_addr_t dmac) {
        forward(port, dmac);
    }

    /* The destination is reached through ECMP group `group`; table ecmp picks the member. */
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

    /* ---- ECMP ---- */

    /* One member of a group: the next hop on `port`, whose router MAC is `dmac`. */
    action to_nexthop(PortId_t port, mac_addr_t dmac) {
        forward(port, dmac);
    }

    /* Which 4 bits of the hash pick the bucket. Every switch hashes the same 5-tuple with
     * the same CRC, so if every tier used the same bits a flow that took member 0 at an edge
     * switch would take member 0 at every aggregation switch too, and half of the core would
     * carry nothing (ECMP polarization). A salt does not help: a CRC is linear, so a salted
     * hash is the unsalted one XOR a constant. Different bits are different linear functions of
     * the tuple; the control plane gives each tier its own nibble (`pisa lab tables` uses the
     * switch's hop distance from the hosts). */
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
        size = 4096;    /* 256 groups of 16 buckets */
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();                                   /* not IPv4 */
        } else if (!router_mac.apply().hit) {
            drop();                                   /* not sent to one of my MACs */
        } else if (hdr.ipv4.ttl <= 1 || hdr.ipv4.ihl < 5) {
            drop();                                   /* TTL expires here, or a bad header */
        } else {
            ig_md.hash = ecmp_hash.get({
                hdr.ipv4.src_addr,
                hdr.ipv4.dst_addr,
                hdr.ipv4.protocol,
                ig_md.l4_src_port,
                ig_md.l4_dst_port});
            ecmp_bits.apply();
            switch (routes.apply().action_run) {
                to_group : {
                    ecmp.apply();
                }
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
        /* Option words that were not parsed are invalid and add 0. */
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
/* Egress: pass-through                                                                       */
/* ------------------------------------------------------------------------------------------ */

parser SwitchEgressParser(packet_in pkt,
                          out egress_header_t hdr,
                          out egress_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control SwitchEgress(inout egress_header_t hdr,
                     inout egress_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout egress_header_t hdr,
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
