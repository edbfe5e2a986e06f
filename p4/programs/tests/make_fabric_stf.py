#!/usr/bin/python3
"""Writes the fabric_*.stf golden tests for p4/programs/fabric.p4.

Expected output bytes are built here with scapy from what the program is specified to do
(never from the emulator's output): a routed packet gets the MAC it was sent to (the switch's
router MAC) as source, the host's / next hop's MAC as destination, TTL - 1 and a freshly
computed IPv4 header checksum (scapy computes it, IPv4 options included).

The ECMP member is predicted here too: bucket = the low 4 bits of CRC-16/ARC (what TNA's
HashAlgorithm_t.CRC16 is: poly 0x8005, reflected in and out, init 0, xor out 0) over the
13 bytes src addr . dst addr . protocol . L4 src port . L4 dst port (ports 0 unless TCP/UDP and
not a fragment); the member is bucket % n, as the control plane installs it.

Run with Debian's python3 (python3-scapy):  /usr/bin/python3 make_fabric_stf.py
"""
import os
import struct

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP, IPOption_RR
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

HERE = os.path.dirname(os.path.abspath(__file__))

# One leaf switch, as in p4/programs/fabric.tables.yaml.
ROUTER = "02:00:00:00:00:fe"           # this switch's router MAC
HOST_MAC = {1: "02:00:00:00:00:01", 2: "02:00:00:00:00:02"}
HOST_IP = {1: "10.0.1.1", 2: "10.0.1.2"}
HOST_PORT = {1: 0, 2: 1}
# Group 1: the two spines, on ports 2 and 3 (member 0 and member 1).
GROUP1 = [(2, "02:00:00:00:01:fe"), (3, "02:00:00:00:02:fe")]
REMOTE = "10.0.2.3"                    # a host behind the spines (10.0.0.0/8 -> group 1)


def mac_hex(m):
    return "0x" + m.replace(":", "")


def ip_hex(a):
    return "0x" + "".join(f"{int(x):02x}" for x in a.split("."))


SETUP = f"""\
# One leaf switch, as in p4/programs/fabric.tables.yaml:
#   port 0 h1 {HOST_MAC[1]} {HOST_IP[1]}   port 1 h2 {HOST_MAC[2]} {HOST_IP[2]}
#   ports 2 and 3: spines {GROUP1[0][1]} and {GROUP1[1][1]}, ECMP group 1 for 10.0.0.0/8
# Router MAC {ROUTER}.
add SwitchIngress.router_mac hdr.ethernet.dst_addr:{mac_hex(ROUTER)} SwitchIngress.routable()
add SwitchIngress.routes hdr.ipv4.dst_addr:{ip_hex(HOST_IP[1])}/32 SwitchIngress.to_host(port:{HOST_PORT[1]}, dmac:{mac_hex(HOST_MAC[1])})
add SwitchIngress.routes hdr.ipv4.dst_addr:{ip_hex(HOST_IP[2])}/32 SwitchIngress.to_host(port:{HOST_PORT[2]}, dmac:{mac_hex(HOST_MAC[2])})
add SwitchIngress.routes hdr.ipv4.dst_addr:0x0a000000/8 SwitchIngress.to_group(group:1)
""" + "".join(
    f"add SwitchIngress.ecmp ig_md.group:1 ig_md.bucket:{b} "
    f"SwitchIngress.to_nexthop(port:{GROUP1[b % 2][0]}, dmac:{mac_hex(GROUP1[b % 2][1])})\n"
    for b in range(16))


# ---- CRC-16/ARC, written out bit by bit ----

def crc16_arc(data):
    crc = 0x0000
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


assert crc16_arc(b"123456789") == 0xBB3D  # the catalogue's check value for CRC-16/ARC


def five_tuple(pkt):
    ip = pkt[IP]
    sport = dport = 0
    mf = int(ip.flags) & 1
    if ip.frag == 0 and not mf and ip.proto in (6, 17):
        l4 = bytes(ip.payload)
        sport, dport = struct.unpack("!HH", l4[:4])
    return (bytes(map(int, ip.src.split("."))) + bytes(map(int, ip.dst.split(".")))
            + struct.pack("!BHH", ip.proto, sport, dport))


def bucket(pkt):
    return crc16_arc(five_tuple(pkt)) & 0xF


def member(pkt, members=GROUP1):
    return members[bucket(pkt) % len(members)]


# ---- packets ----

def hexs(pkt):
    b = bytes(pkt)
    return " ".join(b[i:i + 16].hex() for i in range(0, len(b), 16))


def payload(tag, n=18):
    return Raw((tag.encode() * n)[:n])


def udp(src, dst, sport=4000, dport=5000, ttl=64, dmac=ROUTER, tag="u", **ip_kw):
    return (Ether(src=HOST_MAC[src], dst=dmac) / IP(src=HOST_IP[src], dst=dst, ttl=ttl, id=0x1234, **ip_kw)
            / UDP(sport=sport, dport=dport) / payload(tag))


def tcp(src, dst, sport=40000, dport=80, ttl=64, dmac=ROUTER, tag="t", **ip_kw):
    return (Ether(src=HOST_MAC[src], dst=dmac) / IP(src=HOST_IP[src], dst=dst, ttl=ttl, id=0x4321, **ip_kw)
            / TCP(sport=sport, dport=dport, flags="S", seq=1) / payload(tag, 8))


def icmp(src, dst, ttl=64, dmac=ROUTER, seq=1):
    return (Ether(src=HOST_MAC[src], dst=dmac) / IP(src=HOST_IP[src], dst=dst, ttl=ttl, id=0x2222)
            / ICMP(type=8, id=0x77, seq=seq) / payload("p", 24))


def routed(pkt, dmac):
    """What fabric.p4 makes of a routed packet: smac := the old dmac, dmac := next hop,
    TTL - 1, IPv4 checksum recomputed by scapy (options included)."""
    original = bytes(pkt)
    out = Ether(original)
    out[Ether].src = out[Ether].dst
    out[Ether].dst = dmac
    out[IP].ttl -= 1
    del out[IP].chksum
    rebuilt = bytes(out)
    assert len(rebuilt) == len(original)
    # Only the MACs, the TTL and the checksum change; the rest is byte for byte the same.
    ihl = out[IP].ihl * 4
    assert original[12:22] == rebuilt[12:22] and original[23:24] == rebuilt[23:24]
    assert original[26:14 + ihl] == rebuilt[26:14 + ihl]
    assert original[14 + ihl:] == rebuilt[14 + ihl:], "L4 bytes changed"
    assert rebuilt[22] == original[22] - 1
    return rebuilt


def checksum_ok(raw):
    """Independent check of a header checksum: the ones' complement sum of the header is 0xffff."""
    ihl = (raw[14] & 0xF) * 4
    s = sum(struct.unpack(f"!{ihl // 2}H", raw[14:14 + ihl]))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def expect_routed(pkt, port, dmac):
    out = routed(pkt, dmac)
    assert checksum_ok(out)
    return f"expect {port} {hexs(out)} $"


def write(name, title, body):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# {title}\n# Generated by make_fabric_stf.py (expected bytes from scapy, not from pisa).\n")
        f.write(SETUP)
        f.write("\n")
        f.write(body)
    print("wrote", name)


# ---- the tests ----

def host():
    a = udp(1, HOST_IP[2], tag="a")
    b = tcp(2, HOST_IP[1], ttl=17, tag="b")
    c = icmp(1, HOST_IP[2])
    # IPv4 options (record route, 4 slots: ihl 9): the checksum must cover them.
    d = udp(2, HOST_IP[1], tag="d", options=[IPOption_RR(routers=["0.0.0.0"] * 4), IPOption_NOP()])
    assert Ether(bytes(d))[IP].ihl > 5
    return f"""\
# h1 -> h2 (a /32 route to a host on this switch, port 1): smac = the router MAC it was sent
# to, dmac = h2, TTL 64 -> 63, new checksum.
packet {HOST_PORT[1]} {hexs(a)}
{expect_routed(a, HOST_PORT[2], HOST_MAC[2])}
# h2 -> h1, TCP, TTL 17 -> 16.
packet {HOST_PORT[2]} {hexs(b)}
{expect_routed(b, HOST_PORT[1], HOST_MAC[1])}
# h1 -> h2, ICMP echo.
packet {HOST_PORT[1]} {hexs(c)}
{expect_routed(c, HOST_PORT[2], HOST_MAC[2])}
# h2 -> h1 with IPv4 options (ihl {Ether(bytes(d))[IP].ihl}): the recomputed checksum covers the options.
packet {HOST_PORT[2]} {hexs(d)}
{expect_routed(d, HOST_PORT[1], HOST_MAC[1])}
wait
"""


def find(make, want_bucket_parity, start, **kw):
    """The first sport >= start whose packet lands on the member of the given parity."""
    sport = start
    while True:
        p = make(sport, **kw)
        if bucket(p) % 2 == want_bucket_parity:
            return p
        sport += 1


def ecmp():
    # Two UDP flows h1 -> REMOTE that differ only in the source port, chosen (by search) so
    # that their buckets have different parity: one per member of group 1.
    f0 = find(lambda s, **kw: udp(1, REMOTE, sport=s, tag="0"), 0, 10000)
    f1 = find(lambda s, **kw: udp(1, REMOTE, sport=s, tag="1"), 1, f0[UDP].sport + 1)
    assert member(f0)[0] != member(f1)[0]
    # The same flows again (later packets, other payloads): each stays on its member.
    f0b = udp(1, REMOTE, sport=f0[UDP].sport, tag="x")
    f1b = udp(1, REMOTE, sport=f1[UDP].sport, tag="y")
    lines = [
        f"# Flow A: UDP {HOST_IP[1]}:{f0[UDP].sport} -> {REMOTE}:5000, CRC16 0x{crc16_arc(five_tuple(f0)):04x},"
        f" bucket {bucket(f0)} -> member {bucket(f0) % 2} (port {member(f0)[0]}).",
        f"packet {HOST_PORT[1]} {hexs(f0)}",
        expect_routed(f0, *member(f0)),
        f"# Flow B: UDP {HOST_IP[1]}:{f1[UDP].sport} -> {REMOTE}:5000, CRC16 0x{crc16_arc(five_tuple(f1)):04x},"
        f" bucket {bucket(f1)} -> member {bucket(f1) % 2} (port {member(f1)[0]}).",
        f"packet {HOST_PORT[1]} {hexs(f1)}",
        expect_routed(f1, *member(f1)),
        "wait",
        "# Both flows again: each keeps its member.",
        f"packet {HOST_PORT[1]} {hexs(f0b)}",
        expect_routed(f0b, *member(f0b)),
        f"packet {HOST_PORT[1]} {hexs(f1b)}",
        expect_routed(f1b, *member(f1b)),
        "wait",
    ]
    # A sweep: TCP flows from h2 with source ports 20000.. until all 16 buckets have been
    # seen; each must leave on the member its bucket selects.
    seen = {}
    sport = 20000
    while len(seen) < 16:
        p = tcp(2, REMOTE, sport=sport, dport=443, tag="s")
        seen.setdefault(bucket(p), p)
        sport += 1
    lines.append("# A TCP flow for each of the 16 buckets (h2 -> %s:443, source ports from 20000):" % REMOTE)
    for b in sorted(seen):
        p = seen[b]
        lines.append(f"# sport {p[TCP].sport}: CRC16 0x{crc16_arc(five_tuple(p)):04x}, bucket {b}, port {member(p)[0]}")
        lines.append(f"packet {HOST_PORT[2]} {hexs(p)}")
        lines.append(expect_routed(p, *member(p)))
        lines.append("wait")
    # ICMP hashes with ports 0.
    ping = icmp(1, REMOTE)
    lines += [
        f"# ICMP (ports 0 in the hash): CRC16 0x{crc16_arc(five_tuple(ping)):04x}, bucket {bucket(ping)}, port {member(ping)[0]}.",
        f"packet {HOST_PORT[1]} {hexs(ping)}",
        expect_routed(ping, *member(ping)),
        "wait",
    ]
    # Fragments: the first fragment (MF set) carries the UDP ports, a later one does not; both
    # hash without the ports and so take the same member. The flow is chosen so that hashing
    # the first fragment's ports would have picked the other member.
    sport = 30000
    while True:
        first = udp(1, REMOTE, sport=sport, tag="f", flags="MF")
        with_ports = crc16_arc(five_tuple(first)[:9] + struct.pack("!HH", sport, 5000)) & 0xF
        if with_ports % 2 != bucket(first) % 2:
            break
        sport += 1
    later = (Ether(src=HOST_MAC[1], dst=ROUTER)
             / IP(src=HOST_IP[1], dst=REMOTE, ttl=64, id=0x1234, proto=17, frag=3) / payload("g", 24))
    assert bucket(first) == bucket(later)
    lines += [
        f"# Fragments of one UDP datagram (sport {sport}): bucket {bucket(first)} for both, port {member(first)[0]}"
        f" (with the ports it would be bucket {with_ports}).",
        f"packet {HOST_PORT[1]} {hexs(first)}",
        expect_routed(first, *member(first)),
        f"packet {HOST_PORT[1]} {hexs(later)}",
        expect_routed(later, *member(later)),
        "wait",
    ]
    return "\n".join(lines) + "\n"


def ttl():
    t1 = udp(1, HOST_IP[2], ttl=1, tag="a")
    t0 = udp(1, HOST_IP[2], ttl=0, tag="b")
    t1g = udp(1, REMOTE, ttl=1, tag="c")
    t2 = udp(1, HOST_IP[2], ttl=2, tag="d")
    t2g = udp(1, REMOTE, ttl=2, tag="e")
    return f"""\
# Routed packets with TTL <= 1 are dropped, to a host or to a group.
packet {HOST_PORT[1]} {hexs(t1)}
packet {HOST_PORT[1]} {hexs(t0)}
packet {HOST_PORT[1]} {hexs(t1g)}
no_packet
wait
# TTL 2 still goes out, with TTL 1.
packet {HOST_PORT[1]} {hexs(t2)}
{expect_routed(t2, HOST_PORT[2], HOST_MAC[2])}
packet {HOST_PORT[1]} {hexs(t2g)}
{expect_routed(t2g, *member(t2g))}
wait
"""


def not_my_mac():
    to_h2 = udp(1, HOST_IP[2], dmac=HOST_MAC[2], tag="a")
    bcast = udp(1, HOST_IP[2], dmac="ff:ff:ff:ff:ff:ff", tag="b")
    spine = udp(1, REMOTE, dmac=GROUP1[0][1], tag="c")
    ok = udp(1, HOST_IP[2], tag="d")
    return f"""\
# IPv4 frames not sent to the router MAC are dropped: addressed to h2's MAC, broadcast, or to
# a spine's router MAC.
packet {HOST_PORT[1]} {hexs(to_h2)}
packet {HOST_PORT[1]} {hexs(bcast)}
packet {HOST_PORT[1]} {hexs(spine)}
no_packet
wait
# The same packet sent to the router MAC is routed.
packet {HOST_PORT[1]} {hexs(ok)}
{expect_routed(ok, HOST_PORT[2], HOST_MAC[2])}
wait
"""


def non_ipv4():
    arp = Ether(src=HOST_MAC[1], dst="ff:ff:ff:ff:ff:ff") / ARP(
        op=1, hwsrc=HOST_MAC[1], psrc=HOST_IP[1], pdst=HOST_IP[2])
    arp_router = Ether(src=HOST_MAC[1], dst=ROUTER) / ARP(
        op=1, hwsrc=HOST_MAC[1], psrc=HOST_IP[1], pdst="10.0.1.254")
    v6 = Ether(src=HOST_MAC[1], dst=ROUTER) / IPv6(src="fd00::1", dst="fd00::2", hlim=64) / UDP(
        sport=4000, dport=5000) / payload("6")
    other = Ether(src=HOST_MAC[1], dst=ROUTER, type=0x88b5) / payload("pisa ", 46)
    ok = udp(1, REMOTE, tag="z")
    short = udp(1, REMOTE, tag="i", ihl=4)
    assert bytes(short)[14] == 0x44
    return f"""\
# Frames that are not IPv4 are dropped, even when sent to the router MAC: ARP (broadcast and
# to the router MAC), IPv6, an experimental EtherType.
packet {HOST_PORT[1]} {hexs(arp)}
packet {HOST_PORT[1]} {hexs(arp_router)}
packet {HOST_PORT[1]} {hexs(v6)}
packet {HOST_PORT[1]} {hexs(other)}
no_packet
wait
# A malformed IPv4 header (ihl 4, less than its 20 bytes) is dropped too.
packet {HOST_PORT[1]} {hexs(short)}
no_packet
wait
# IPv4 from the same host is routed.
packet {HOST_PORT[1]} {hexs(ok)}
{expect_routed(ok, *member(ok))}
wait
"""


def lpm_miss():
    miss = udp(1, "192.168.7.7", tag="m")
    group9 = udp(1, "172.16.0.9", tag="g")
    ok = udp(1, "10.200.0.1", tag="o")
    return f"""\
# No route to 192.168.7.7: routes' default action drops.
packet {HOST_PORT[1]} {hexs(miss)}
no_packet
wait
# 172.16.0.0/12 points at group 9, which has no members: ecmp misses and drops.
add SwitchIngress.routes hdr.ipv4.dst_addr:0xac100000/12 SwitchIngress.to_group(group:9)
packet {HOST_PORT[1]} {hexs(group9)}
no_packet
wait
# 10.200.0.1 matches 10.0.0.0/8: group 1.
packet {HOST_PORT[1]} {hexs(ok)}
{expect_routed(ok, *member(ok))}
wait
"""


write("fabric_host.stf", "fabric.p4: routing to a host on this switch (MAC rewrite, TTL, checksum)", host())
write("fabric_ecmp.stf", "fabric.p4: ECMP over a 2-member group by the CRC16 of the 5-tuple", ecmp())
write("fabric_ttl.stf", "fabric.p4: routed packets with an expiring TTL are dropped", ttl())
write("fabric_not_my_mac.stf", "fabric.p4: frames not sent to the router MAC are dropped", not_my_mac())
write("fabric_non_ipv4.stf", "fabric.p4: frames that are not IPv4 (or have a malformed IPv4 header) are dropped", non_ipv4())
write("fabric_lpm_miss.stf", "fabric.p4: a route miss (or an empty group) drops", lpm_miss())
