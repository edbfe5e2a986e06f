/* fib.p4 — a FIB with VRFs, the work of DPDK's SWX `fib` example (without its ECMP groups), for
 * `pisa bench pipeline --against swx` (docs/swx.md), beside bench/swx/fib.spec doing the same:
 *   - the ingress port picks the VRF (table vrf; a port without one drops);
 *   - IPv4: (VRF exact, destination LPM) picks a next hop (table routing; a miss drops);
 *   - the next hop gives the Ethernet header (destination and source MAC) and the output port
 *     (table nexthop); TTL - 1, the IPv4 checksum recomputed; egress does nothing.
 *   - frames that are not IPv4 drop.
 */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct header_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

struct metadata_t {
    bit<16> vrf_id;
    bit<16> nexthop_id;
}

parser FibIngressParser(packet_in pkt,
                        out header_t hdr,
                        out metadata_t ig_md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control FibIngress(inout header_t hdr,
                   inout metadata_t ig_md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    action set_vrf(bit<16> vrf_id) {
        ig_md.vrf_id = vrf_id;
    }

    table vrf {
        key = {
            ig_intr_md.ingress_port : exact;
        }
        actions = {
            set_vrf;
            drop;
        }
        default_action = drop();
        size = 512;
    }

    action set_nexthop(bit<16> nexthop_id) {
        ig_md.nexthop_id = nexthop_id;
    }

    table routing {
        key = {
            ig_md.vrf_id      : exact;
            hdr.ipv4.dst_addr : lpm;
        }
        actions = {
            set_nexthop;
            drop;
        }
        default_action = drop();
        size = 12288;
    }

    action forward(bit<48> dmac, bit<48> smac, PortId_t port) {
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.bypass_egress = 1;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table nexthop {
        key = {
            ig_md.nexthop_id : exact;
        }
        actions = {
            forward;
            drop;
        }
        default_action = drop();
        size = 4096;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            vrf.apply();
            routing.apply();
            nexthop.apply();
        } else {
            drop();
        }
    }
}

control FibIngressDeparser(packet_out pkt,
                           inout header_t hdr,
                           in metadata_t ig_md,
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
        pkt.emit(hdr);
    }
}

parser FibEgressParser(packet_in pkt,
                       out header_t hdr,
                       out metadata_t eg_md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control FibEgress(inout header_t hdr,
                  inout metadata_t eg_md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control FibEgressDeparser(packet_out pkt,
                          inout header_t hdr,
                          in metadata_t eg_md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(FibIngressParser(),
         FibIngress(),
         FibIngressDeparser(),
         FibEgressParser(),
         FibEgress(),
         FibEgressDeparser()) pipe;

Switch(pipe) main;
