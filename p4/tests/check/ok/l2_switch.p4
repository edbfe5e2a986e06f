/* A small L2 switch: TofinoIngressParser-style helper, VLAN stack, exact MAC table with const
 * entries, ternary/LPM/range keys, switch on action_run, hit/miss, enums, slices and casts. */
#include <core.p4>
#include <tna.p4>

typedef bit<48> mac_addr_t;
const bit<16> ETHERTYPE_VLAN = 0x8100;
const bit<16> ETHERTYPE_IPV4 = 16w0x0800;

enum bit<8> PktKind_t { UNICAST = 1, FLOOD = 2, DROP = 3 }

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header vlan_tag_h {
    bit<3>  pcp;
    bit<1>  cfi;
    bit<12> vid;
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

struct headers_t {
    ethernet_h    ethernet;
    vlan_tag_h[2] vlan;
    ipv4_h        ipv4;
}

struct metadata_t {
    bit<12>   vid;
    PktKind_t kind;
    bit<16>   l4_hint;
    bool      is_ip;
}

parser TofinoIngressParser(packet_in pkt, out ingress_intrinsic_metadata_t ig_intr_md) {
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

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_VLAN : parse_vlan;
            ETHERTYPE_IPV4 : parse_ipv4;
            0x0000 &&& 0xfe00 : reject;
            0x9000 .. 0x90ff : accept;
            default : accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        meta.vid = hdr.vlan[0].vid;
        transition select(pkt.lookahead<bit<16>>()) {
            ETHERTYPE_VLAN : parse_vlan;
            _ : parse_after_vlan;
        }
    }
    state parse_after_vlan {
        meta.l4_hint = (bit<16>) hdr.vlan.lastIndex;
        transition select(hdr.vlan.last.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.HeaderTooShort);
        meta.is_ip = true;
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    bit<16> scratch = 0;

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
        meta.kind = PktKind_t.DROP;
    }

    action bump(inout bit<8> x, in bit<8> by) {
        if (x != 0) {
            x = x |-| by;
        }
    }

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        meta.kind = PktKind_t.UNICAST;
    }

    action flood(MulticastGroupId_t mgid) {
        ig_tm_md.mcast_grp_a = mgid;
        meta.kind = PktKind_t.FLOOD;
    }

    @name(".dmac_table")
    table dmac {
        key = {
            hdr.ethernet.dst_addr : exact @name("dst");
            meta.vid              : exact;
        }
        actions = {
            forward;
            @defaultonly flood;
            @tableonly drop;
        }
        const default_action = flood(1);
        const entries = {
            (0xffffffffffff, 1) : drop();
            (48w0x000000000001, 12w1) : forward(5);
        }
        size = 1024;
    }

    table acl {
        key = {
            hdr.ipv4.src_addr        : ternary;
            hdr.ipv4.dst_addr        : lpm;
            hdr.ipv4.protocol        : range;
            hdr.ipv4.ttl[7:4]        : exact @name("ttl_hi");
        }
        actions = {
            drop;
            NoAction;
        }
        const entries = {
            @priority(8) (0x0a000000 &&& 0xff000000, 0x0a010000 &&& 0xffff0000, 6 .. 17, 0) : drop();
            @priority(7) (_, _, _, 1) : NoAction();
        }
        default_action = NoAction();
    }

    apply {
        scratch = hdr.ethernet.ether_type |+| 16w1;
        meta.l4_hint = hdr.ipv4.protocol ++ 8w0;
        meta.l4_hint = max(meta.l4_hint, scratch) - min(16w3, scratch);
        if (hdr.vlan[0].isValid()) {
            meta.vid = hdr.vlan[0].vid;
        } else {
            meta.vid = 12w1;
        }
        switch (dmac.apply().action_run) {
            forward: {
                if (meta.is_ip && !acl.apply().hit) {
                    bump(hdr.ipv4.ttl, 1);
                }
            }
            drop: {
                exit;
            }
            default: {
                hdr.ethernet.src_addr[7:0] = (bit<8>) meta.kind;
            }
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
