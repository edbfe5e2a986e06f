"""Programs l2l3.p4 on a running `pisa run --p4runtime ADDR` with p4runtime-shell (PyPI) and
reads the entries back: the four-host lab's MACs, router MAC, routes, next hops and source
MACs (the same state as p4/programs/l2l3.tables.yaml), a multicast group and a clone session.
With --packet-io it also sends a packet-out that the switch returns to the CPU port and waits
for the packet-in. Prints one JSON object with what it read.

usage: program_l2l3.py GRPC_ADDR [--config P4INFO.txt,PROGRAM.p4] [--packet-io]
"""
import json
import sys

import p4runtime_sh.shell as sh

addr = sys.argv[1]
config = None
if "--config" in sys.argv:
    p4info, program = sys.argv[sys.argv.index("--config") + 1].split(",")
    config = sh.FwdPipeConfig(p4info, program)
sh.setup(device_id=1, grpc_addr=addr, election_id=(0, 1), config=config)


def entry(table, action, match, params):
    te = sh.TableEntry(table)(action=action)
    for k, v in match.items():
        te.match[k] = v
    for k, v in params.items():
        te.action[k] = v
    te.insert()


hosts = {1: 0, 2: 1, 3: 2, 4: 3}
for h, port in hosts.items():
    mac = "02:00:00:00:00:%02x" % h
    entry("SwitchIngress.mac_dst", "SwitchIngress.set_port",
          {"hdr.ethernet.dst_addr": mac}, {"port": str(port)})
    entry("SwitchIngress.nexthop", "SwitchIngress.forward_l3",
          {"ig_md.nexthop_id": str(h)}, {"dmac": mac, "port": str(port)})
    entry("SwitchEgress.port_smac", "SwitchEgress.rewrite_smac",
          {"eg_intr_md.egress_port": str(port)}, {"smac": "02:00:00:00:00:fe"})
entry("SwitchIngress.router_mac", "NoAction", {"hdr.ethernet.dst_addr": "02:00:00:00:00:fe"}, {})
for prefix, nh in [("10.0.1.1/32", 1), ("10.0.1.2/32", 2), ("10.0.2.0/24", 3), ("10.0.3.0/24", 4)]:
    entry("SwitchIngress.ipv4_lpm", "SwitchIngress.set_nexthop",
          {"hdr.ipv4.dst_addr": prefix}, {"nexthop_id": str(nh)})

# Deny telnet to h4 (ternary + range, with a priority).
te = sh.TableEntry("SwitchIngress.acl")(action="SwitchIngress.acl_deny")
te.match["hdr.ipv4.dst_addr"] = "10.0.3.4&&&255.255.255.255"
te.match["hdr.l4.dst_port"] = "23..23"
te.priority = 10
te.insert()

# A multicast group and a clone session.
mg = sh.MulticastGroupEntry(7)
mg.add(0, 0).add(1, 0)
mg.insert()
cs = sh.CloneSessionEntry(9)
cs.add(2, 0)
cs.insert()

out = {"tables": {}}
for t in ["SwitchIngress.mac_dst", "SwitchIngress.router_mac", "SwitchIngress.ipv4_lpm",
          "SwitchIngress.nexthop", "SwitchIngress.acl", "SwitchEgress.port_smac"]:
    out["tables"][t] = len(list(sh.TableEntry(t).read()))
routes = []
for e in sh.TableEntry("SwitchIngress.ipv4_lpm").read():
    m = e.match["hdr.ipv4.dst_addr"]
    routes.append([m.lpm.value.hex(), m.lpm.prefix_len])
out["routes"] = sorted(routes)
out["groups"] = [[r.egress_port for r in g.replicas]
                 for g in sh.MulticastGroupEntry(7).read()]
out["clone_sessions"] = [s.session_id for s in sh.CloneSessionEntry(9).read()]
try:
    entry("SwitchIngress.router_mac", "NoAction", {"hdr.ethernet.dst_addr": "02:00:00:00:00:fe"}, {})
    out["duplicate"] = "accepted"
except Exception as e:  # the shell raises P4RuntimeWriteException with the per-update error
    out["duplicate"] = str(e)

if "--packet-io" in sys.argv:
    entry("SwitchIngress.mac_dst", "SwitchIngress.set_port",
          {"hdr.ethernet.dst_addr": "02:00:00:00:00:64"}, {"port": "64"})
    frame = bytes.fromhex("020000000064" "020000000001" "88b5") + b"pisa" * 12
    sniffed = []
    po = sh.PacketOut(payload=frame)
    po.send()
    for msg in sh.PacketIn().sniff(timeout=3):
        sniffed.append(msg.packet.payload.hex())
        break
    out["packet_in"] = sniffed
    out["packet_out"] = frame.hex()

sh.teardown()
print(json.dumps(out))
