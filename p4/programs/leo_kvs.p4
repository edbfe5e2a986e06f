/* leo_kvs.p4 — LEO's in-network (on-path) accelerator for the key-value store case study:
 * the switch answers the index lookup of a GET for hot keys (key -> the value's location in the
 * server's registered memory; the requester then fetches the value with an RDMA READ) and
 * forwards everything else by destination address.
 *
 * A LEO KVS message rides UDP to port 9191 and starts with the 4-byte LEO header of Fig. 7
 * (request type, path, responder delay) followed by the key and an 8-byte value slot:
 *   leo_h { op:8  path:8  delay:16 }  kv_h { key:64  value:64 }
 * op 1 = GET, 2 = PUT, 3 = reply. The control plane installs the hot keys in `hot` with their
 * locations (`value`: an address in the server's memory region) and a slot index. The requester picks the path (LEO's multi-path selection): a GET
 * sent on path 1 (the switch) that hits a fresh hot key becomes the reply in the switch:
 * Ethernet, IPv4 and UDP addresses swapped (the IPv4 checksum is a sum of 16-bit words, so
 * swapping src and dst leaves it valid), the UDP checksum cleared (optional over IPv4), op 3,
 * path 0xfe ("answered in the network", delay 0), the location filled in, sent back out of the
 * ingress port. A PUT to a hot key marks its slot stale (register `stale`) before going to the
 * server, so later GETs of that key go to the server and never read a stale location.
 *
 * The requester's PUTs and CPU-path GETs travel as RoCEv2 RC SEND-only messages (UDP 4791,
 * BTH opcode 0x04) whose payload is LEO's message (hosts::leo::rdma: the Fig. 7 header,
 * sequence number, length, then key and value). The switch only reads them — it never
 * rewrites a RoCEv2 packet, so no ICRC is recomputed: a PUT (request type RDMA_PUT) to a hot
 * key from a client marks the slot stale; the server's reply to it (source address in
 * `servers`) carries the value's new location, which goes to the control plane as a
 * `refresh` digest {key, slot, location} and marks the slot stale again (an older refresh the
 * agent took while this PUT was in flight must not have reopened the key); the agent
 * (labs::leo::agent) re-installs the key with it and clears `stale` once the PUT has settled.
 * GETs on other paths (0: the server's CPU) and everything else are forwarded by destination IPv4 address (`hosts`).
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8> PROTO_UDP = 17;
const bit<16> LEO_PORT = 9191;
const bit<16> ROCE_PORT = 4791;
const bit<8> RC_SEND_ONLY = 0x04;
/* Request type index of PUT in deploy/leo/kvs-switch.yaml (the Fig. 7 header's first byte). */
const bit<8> RDMA_PUT = 2;
const bit<8> OP_GET = 1;
const bit<8> OP_PUT = 2;
const bit<8> OP_REPLY = 3;
const bit<8> PATH_SWITCH = 1;
const bit<8> PATH_IN_NETWORK = 0xfe;

typedef bit<16> slot_t;
const bit<32> SLOTS = 1024;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
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
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

header bth_h {
    bit<8> opcode;
    bit<8> flags;
    bit<16> pkey;
    bit<8> resv;
    bit<24> dst_qp;
    bit<8> ack_req;
    bit<24> psn;
}

/* LEO's message after the Fig. 7 header in an RDMA SEND: sequence number and payload length. */
header lmsg_h {
    bit<64> seq;
    bit<32> len;
}

header leo_h {
    bit<8> op;
    bit<8> path;
    bit<16> delay;
}

header kv_h {
    bit<64> key;
    bit<64> value;
}

struct header_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    bth_h bth;
    leo_h leo;
    lmsg_h lmsg;
    kv_h kv;
}

struct metadata_t {
    slot_t slot;
    bit<64> value;
    bit<1> from_server;
}

struct refresh_t {
    bit<64> key;
    slot_t slot;
    bit<64> location;
}

parser KvsIngressParser(packet_in pkt,
                        out header_t hdr,
                        out metadata_t ig_md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            LEO_PORT: parse_leo;
            ROCE_PORT: parse_bth;
            default: accept;
        }
    }
    state parse_bth {
        pkt.extract(hdr.bth);
        transition select(hdr.bth.opcode) {
            RC_SEND_ONLY: parse_lmsg;
            default: accept;
        }
    }
    state parse_lmsg {
        pkt.extract(hdr.leo);
        pkt.extract(hdr.lmsg);
        pkt.extract(hdr.kv);
        transition accept;
    }
    state parse_leo {
        pkt.extract(hdr.leo);
        pkt.extract(hdr.kv);
        transition accept;
    }
}

control KvsIngress(inout header_t hdr,
                   inout metadata_t ig_md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<8>, slot_t>(SLOTS, 0) stale;
    RegisterAction<bit<8>, slot_t, bit<8>>(stale) mark_stale = {
        void apply(inout bit<8> v, out bit<8> r) {
            v = 1;
            r = v;
        }
    };
    RegisterAction<bit<8>, slot_t, bit<8>>(stale) read_stale = {
        void apply(inout bit<8> v, out bit<8> r) {
            r = v;
        }
    };

    action to_host(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.bypass_egress = 1;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    table hosts {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            to_host;
            drop;
        }
        default_action = drop();
        size = 256;
    }

    action server() {
        ig_md.from_server = 1;
    }

    table servers {
        key = {
            hdr.ipv4.src_addr : exact;
        }
        actions = {
            server;
            NoAction;
        }
        default_action = NoAction();
        size = 16;
    }

    action hot_key(slot_t slot, bit<64> value) {
        ig_md.slot = slot;
        ig_md.value = value;
    }

    action cold() {}

    table hot {
        key = {
            hdr.kv.key : exact;
        }
        actions = {
            hot_key;
            cold;
        }
        default_action = cold();
        size = 1024;
    }

    action reply() {
        bit<48> mac = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = mac;
        bit<32> ip = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = ip;
        bit<16> port = hdr.udp.dst_port;
        hdr.udp.dst_port = hdr.udp.src_port;
        hdr.udp.src_port = port;
        hdr.udp.checksum = 0;
        hdr.leo.op = OP_REPLY;
        hdr.leo.path = PATH_IN_NETWORK;
        hdr.leo.delay = 0;
        hdr.kv.value = ig_md.value;
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        ig_tm_md.bypass_egress = 1;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();
        } else {
            hosts.apply();
            if (hdr.kv.isValid()) {
                if (hdr.bth.isValid()) {
                    servers.apply();
                }
                if (hot.apply().hit) {
                    if (hdr.bth.isValid()) {
                        if (hdr.leo.op == RDMA_PUT) {
                            // The server's reply to a PUT: refresh digest. Stale either
                            // way, until the agent installs this (the newest) location: an
                            // older refresh the agent took meanwhile must not reopen the key.
                            if (ig_md.from_server == 1) {
                                ig_dprsr_md.digest_type = 1;
                            }
                            mark_stale.execute(ig_md.slot);
                        }
                    } else if (hdr.leo.op == OP_PUT) {
                        mark_stale.execute(ig_md.slot);
                    } else if (hdr.leo.op == OP_GET && hdr.leo.path == PATH_SWITCH) {
                        if (read_stale.execute(ig_md.slot) == 0) {
                            reply();
                        }
                    }
                }
            }
        }
    }
}

control KvsIngressDeparser(packet_out pkt,
                           inout header_t hdr,
                           in metadata_t ig_md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Digest<refresh_t>() refresh;

    apply {
        if (ig_dprsr_md.digest_type == 1) {
            refresh.pack({hdr.kv.key, ig_md.slot, hdr.kv.value});
        }
        pkt.emit(hdr);
    }
}

parser KvsEgressParser(packet_in pkt,
                       out header_t hdr,
                       out metadata_t eg_md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control KvsEgress(inout header_t hdr,
                  inout metadata_t eg_md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control KvsEgressDeparser(packet_out pkt,
                          inout header_t hdr,
                          in metadata_t eg_md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(KvsIngressParser(),
         KvsIngress(),
         KvsIngressDeparser(),
         KvsEgressParser(),
         KvsEgress(),
         KvsEgressDeparser()) pipe;

Switch(pipe) main;
