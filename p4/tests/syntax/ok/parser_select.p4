// Parser states, select keysets, value sets and parser externs of TNA.
#include <tna.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header vlan_h { bit<16> tci; bit<16> ether_type; }
header udp_h { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
struct hdr_t { eth_h eth; vlan_h[2] vlan; udp_h udp; }
struct md_t { bit<8> depth; }

parser IgParser(packet_in pkt, out hdr_t hdr, out md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    value_set<bit<16>>(4) special_ports;
    ParserCounter() counter;
    ParserPriority() prio;
    bit<16> tmp = 0;

    @name(".start")
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        counter.set(8w2);
        transition parse_eth;
    }

    state parse_eth {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x8100 &&& 0xEFFF : parse_vlan;
            0x0800 .. 0x08FF : parse_udp;
            16w0x86dd : reject;
            default : accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        counter.decrement(1);
        transition select(hdr.vlan.last.ether_type, counter.is_zero()) {
            (0x8100, false) : parse_vlan;
            (_, true) : accept;
            (0x0800, _) : parse_udp;
            (default, default) : accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        verify(hdr.udp.len >= 8, error.PacketTooShort);
        tmp = pkt.lookahead<bit<16>>();
        prio.set(3);
        transition select(hdr.udp.dport) {
            special_ports : accept;
            default : accept;
        }
    }
}
