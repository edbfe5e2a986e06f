"""p4runtime-shell packet I/O against `pisa run --p4runtime ADDR` running
control/tests/data/cpu_punt.p4 with port 1 on veth IFACE (this script holds the veth's peer,
PEER): a packet-out with egress_port=1 must leave on the veth; a frame sent on the veth with the
punted EtherType must come back as a packet-in whose ingress_port metadata is 1. Prints one
JSON object.

usage: packet_io.py GRPC_ADDR P4INFO.txt PROGRAM.p4 PEER
"""
import json
import sys
import threading
import time

import p4runtime_sh.shell as sh
from scapy.all import Ether, Raw, sendp, sniff

addr, p4info, program, peer = sys.argv[1:5]
sh.setup(device_id=1, grpc_addr=addr, election_id=(0, 1),
         config=sh.FwdPipeConfig(p4info, program))
out = {}

# Packet-out to port 1: the frame leaves on the veth.
frame = Ether(dst="02:00:00:00:00:07", src="02:00:00:00:00:01", type=0x88b5) / Raw(b"pisa" * 12)
got = []
t = threading.Thread(target=lambda: got.extend(
    sniff(iface=peer, timeout=3, count=1, lfilter=lambda p: p.haslayer(Raw))))
t.start()
time.sleep(0.5)
po = sh.PacketOut(payload=bytes(frame))
po.metadata["egress_port"] = "1"
po.send()
t.join()
out["packet_out_seen"] = [bytes(p).hex() for p in got]
out["packet_out_sent"] = bytes(frame).hex()

# Punt the EtherType: a frame from the veth reaches the controller as a packet-in.
te = sh.TableEntry("Ig.punt")(action="Ig.to_cpu")
te.match["hdr.ethernet.ether_type"] = "0x88b5"
te.insert()
sent = Ether(dst="02:00:00:00:00:09", src="02:00:00:00:00:02", type=0x88b5) / Raw(b"in" * 30)
packet_in = []
sniffer = sh.PacketIn()
t = threading.Thread(target=lambda: packet_in.extend(sniffer.sniff(timeout=3)))
t.start()
time.sleep(0.5)
sendp(sent, iface=peer, verbose=False)
t.join()
out["packet_in"] = [
    {"payload": m.packet.payload.hex(),
     "metadata": {str(md.metadata_id): md.value.hex() for md in m.packet.metadata}}
    for m in packet_in
]
out["packet_in_sent"] = bytes(sent).hex()
sh.teardown()
print(json.dumps(out))
