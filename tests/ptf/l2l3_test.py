"""PTF tests for l2l3.p4 on pisa: each test pushes the program over P4Runtime (fresh state),
programs what it needs with p4runtime-shell and checks the frames on the ports.

Run (as root, pisa on veths ptfs0..3, PTF on their peers ptfh0..3):
    ptf --test-dir tests/ptf --interface 0@ptfh0 --interface 1@ptfh1 \
        --interface 2@ptfh2 --interface 3@ptfh3 \
        --test-params "grpc_addr='127.0.0.1:9559';p4info='out/l2l3.p4info.txt';program='p4/programs/l2l3.p4'"
"""
import ptf
import ptf.testutils as tu
from ptf.base_tests import BaseTest

import p4runtime_sh.shell as sh

ROUTER_MAC = "02:00:00:00:00:fe"


def mac(h):
    return "02:00:00:00:00:%02x" % h


class L2L3Test(BaseTest):
    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        p = tu.test_params_get()
        sh.setup(device_id=1, grpc_addr=p["grpc_addr"], election_id=(0, 1),
                 config=sh.FwdPipeConfig(p["p4info"], p["program"]))

    def tearDown(self):
        sh.teardown()
        BaseTest.tearDown(self)

    def entry(self, table, action, match, params=None, priority=None):
        te = sh.TableEntry(table)(action=action)
        for k, v in match.items():
            te.match[k] = v
        for k, v in (params or {}).items():
            te.action[k] = v
        if priority is not None:
            te.priority = priority
        te.insert()

    def route_to(self, host, port, prefix):
        """A route to `prefix` through next hop `host` on `port`, and the router MAC."""
        self.entry("SwitchIngress.ipv4_lpm", "SwitchIngress.set_nexthop",
                   {"hdr.ipv4.dst_addr": prefix}, {"nexthop_id": str(host)})
        self.entry("SwitchIngress.nexthop", "SwitchIngress.forward_l3",
                   {"ig_md.nexthop_id": str(host)}, {"dmac": mac(host), "port": str(port)})
        self.entry("SwitchEgress.port_smac", "SwitchEgress.rewrite_smac",
                   {"eg_intr_md.egress_port": str(port)}, {"smac": ROUTER_MAC})


class Bridged(L2L3Test):
    """A known destination MAC goes out of its port, unchanged."""

    def runTest(self):
        self.entry("SwitchIngress.mac_dst", "SwitchIngress.set_port",
                   {"hdr.ethernet.dst_addr": mac(2)}, {"port": "1"})
        pkt = tu.simple_tcp_packet(eth_dst=mac(2), eth_src=mac(1), ip_src="10.0.1.1",
                                   ip_dst="10.0.1.2")
        tu.send_packet(self, 0, pkt)
        tu.verify_packet(self, pkt, 1)
        tu.verify_no_other_packets(self)


class Routed(L2L3Test):
    """A packet to the router MAC is routed: new MACs, TTL - 1, out of the next hop's port."""

    def runTest(self):
        self.entry("SwitchIngress.router_mac", "NoAction", {"hdr.ethernet.dst_addr": ROUTER_MAC})
        self.route_to(3, 2, "10.0.2.0/24")
        pkt = tu.simple_tcp_packet(eth_dst=ROUTER_MAC, eth_src=mac(1), ip_src="10.0.1.1",
                                   ip_dst="10.0.2.3", ip_ttl=64)
        exp = tu.simple_tcp_packet(eth_dst=mac(3), eth_src=ROUTER_MAC, ip_src="10.0.1.1",
                                   ip_dst="10.0.2.3", ip_ttl=63)
        tu.send_packet(self, 0, pkt)
        tu.verify_packet(self, exp, 2)
        tu.verify_no_other_packets(self)


class NoRoute(L2L3Test):
    """Without a matching route the routed packet is dropped (ipv4_lpm's default)."""

    def runTest(self):
        self.entry("SwitchIngress.router_mac", "NoAction", {"hdr.ethernet.dst_addr": ROUTER_MAC})
        pkt = tu.simple_tcp_packet(eth_dst=ROUTER_MAC, eth_src=mac(1), ip_dst="10.9.9.9")
        tu.send_packet(self, 0, pkt)
        tu.verify_no_other_packets(self)


class AclDeny(L2L3Test):
    """The ACL (ternary + range, with a priority) drops telnet to h4 and lets ssh through."""

    def runTest(self):
        self.entry("SwitchIngress.router_mac", "NoAction", {"hdr.ethernet.dst_addr": ROUTER_MAC})
        self.route_to(4, 3, "10.0.3.0/24")
        self.entry("SwitchIngress.acl", "SwitchIngress.acl_deny",
                   {"hdr.ipv4.dst_addr": "10.0.3.4&&&255.255.255.255",
                    "hdr.l4.dst_port": "23..23"}, priority=10)
        telnet = tu.simple_tcp_packet(eth_dst=ROUTER_MAC, eth_src=mac(1), ip_dst="10.0.3.4",
                                      tcp_dport=23)
        tu.send_packet(self, 0, telnet)
        tu.verify_no_other_packets(self)
        ssh = tu.simple_tcp_packet(eth_dst=ROUTER_MAC, eth_src=mac(1), ip_dst="10.0.3.4",
                                   tcp_dport=22, ip_ttl=64)
        exp = tu.simple_tcp_packet(eth_dst=mac(4), eth_src=ROUTER_MAC, ip_dst="10.0.3.4",
                                   tcp_dport=22, ip_ttl=63)
        tu.send_packet(self, 0, ssh)
        tu.verify_packet(self, exp, 3)
        tu.verify_no_other_packets(self)
        # The deny entry's direct counter counted the telnet packet.
        counted = [e.data.packet_count
                   for e in sh.DirectCounterEntry("SwitchIngress.acl_counter").read()]
        assert counted == [1], counted


class Flood(L2L3Test):
    """An unknown destination floods through multicast group 1 (the PRE's replicas)."""

    def runTest(self):
        mg = sh.MulticastGroupEntry(1)
        for port in (1, 2, 3):
            mg.add(port, 0)
        mg.insert()
        pkt = tu.simple_udp_packet(eth_dst="02:00:00:00:00:99", eth_src=mac(1))
        tu.send_packet(self, 0, pkt)
        tu.verify_packets(self, pkt, [1, 2, 3])
