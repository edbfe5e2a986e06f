"""finsy (PyPI) against `pisa run --p4runtime ADDR`: pushes l2l3.p4 with pisa's P4Info, inserts
a route, a next hop and a MAC entry, reads them back and reads a counter cell. Prints one JSON
object with what it read.

usage: finsy_l2l3.py GRPC_ADDR P4INFO.txt PROGRAM.p4
"""
import asyncio
import json
import sys
from pathlib import Path

import finsy as fy


async def main():
    addr, p4info, program = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    opts = fy.SwitchOptions(p4info=p4info, p4blob=program)
    out = {}
    async with fy.Switch("pisa", addr, opts) as sw:
        await sw.insert([
            fy.P4TableEntry(
                "SwitchIngress.ipv4_lpm",
                match=fy.P4TableMatch({"hdr.ipv4.dst_addr": "10.0.2.0/24"}),
                action=fy.P4TableAction("SwitchIngress.set_nexthop", nexthop_id=3),
            ),
            fy.P4TableEntry(
                "SwitchIngress.nexthop",
                match=fy.P4TableMatch({"ig_md.nexthop_id": 3}),
                action=fy.P4TableAction("SwitchIngress.forward_l3",
                                        dmac="02:00:00:00:00:03", port=2),
            ),
            fy.P4TableEntry(
                "SwitchIngress.mac_dst",
                match=fy.P4TableMatch({"hdr.ethernet.dst_addr": "02:00:00:00:00:01"}),
                action=fy.P4TableAction("SwitchIngress.set_port", port=0),
            ),
        ])
        for t in ["SwitchIngress.ipv4_lpm", "SwitchIngress.nexthop", "SwitchIngress.mac_dst"]:
            out[t] = [[e.action.name, {k: str(v) for k, v in e.match.items()}]
                      async for e in sw.read(fy.P4TableEntry(t))]
        out["counter"] = [c.data.packet_count async for c in sw.read(
            fy.P4CounterEntry("SwitchIngress.ingress_port_counter", index=1))]
        try:
            await sw.insert([fy.P4TableEntry(
                "SwitchIngress.mac_dst",
                match=fy.P4TableMatch({"hdr.ethernet.dst_addr": "02:00:00:00:00:01"}),
                action=fy.P4TableAction("SwitchIngress.set_port", port=0),
            )])
            out["duplicate"] = "accepted"
        except fy.P4ClientError as e:
            out["duplicate"] = str(e)
    print(json.dumps(out))


asyncio.run(main())
