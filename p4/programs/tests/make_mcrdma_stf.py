#!/usr/bin/python3
"""Writes the mcrdma_*.stf golden tests for p4/programs/mcrdma.p4.

Expected output bytes are built here with scapy (scapy.contrib.roce computes the ICRC) from what
the program is specified to do (seed 001, MC-RDMA §IV), never from the emulator's output:
- a replicated data packet leaves each branch with the next hop's MACs, TTL - 1, UDP checksum 0
  and the branch's destination IP; at the last replication point also the receiver's QPN and,
  on WRITE FIRST/ONLY, the receiver's VA (sender VA + offset) and R_key. Its ICRC is the
  sender's, stale where the switch rewrote it (receivers run with ICRC checking off);
- a merged ACK, a rewritten NAK and a re-addressed CNP reach the sender with source IP DST_1
  and an ICRC scapy computes, which the switch must have recomputed to the same value.

The switch plays tor1 of the MC-RDMA testbed (deploy/labs/mcrdma-testbed.yaml): hosts a1, b1,
c1, d1 on ports 0-3, the uplink to agg on port 4. The group: sender a1 (QPN 0x11), MC_ID
0x800001, receivers d1 (slot 0, DST_1), a2 and b2 (slots 1, 2; behind agg). Algorithm 1 at
tor1: D_vv = [[d1], [a2, b2]], so tor1 replicates: RID 1 -> d1 (last replication point),
RID 2 -> a branch addressed to a2 that tor2 replicates again.

Run with Debian's python3 (python3-scapy):  /usr/bin/python3 make_mcrdma_stf.py
"""
import os

from scapy.contrib.roce import AETH, BTH, CNPPadding
from scapy.fields import IntField, XIntField, XLongField
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

HERE = os.path.dirname(os.path.abspath(__file__))


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dlen", 0)]


TOR_MAC = "02:00:00:00:00:f1"
AGG_MAC = "02:00:00:00:00:f3"
UPLINK = 4
ECMP_GROUP = 1

A1 = dict(port=0, mac="02:00:00:00:01:10", ip="10.0.1.10", sport=0xC011, qpn=0x000011)
B1 = dict(port=1, mac="02:00:00:00:01:11", ip="10.0.1.11", sport=0xC021)
C1 = dict(port=2, mac="02:00:00:00:01:12", ip="10.0.1.12", sport=0xC031)
D1 = dict(port=3, mac="02:00:00:00:01:13", ip="10.0.1.13", sport=0xC041, qpn=0x000101,
          va=0x00007F0000100000, rkey=0x11112222, slot=0)
A2 = dict(ip="10.0.2.10", sport=0xC051, qpn=0x000202, slot=1)
B2 = dict(ip="10.0.2.11", sport=0xC061, qpn=0x000303, slot=2)
LOCAL = [A1, B1, C1, D1]

MC_ID = 0x800001
MGID = 1
GROUP = 7           # the merge registers' index on tor1
SIZE = 3
SENDER_VA = 0x10000000
SENDER_LEN = 0x10000
M64 = (1 << 64) - 1
PSN_MASK = 0xFFFFFF


def setup():
    offset = (D1["va"] - SENDER_VA) & M64
    lines = [
        "# tor1 of the MC-RDMA testbed: a1 b1 c1 d1 on ports 0-3, agg behind port 4.",
        f"# Group <a1, MC_ID {MC_ID:#x}>: sender QPN {A1['qpn']:#x}; receivers d1 (QPN {D1['qpn']:#x}, DST_1),",
        f"# a2 (QPN {A2['qpn']:#x}), b2 (QPN {B2['qpn']:#x}); sender buffer [{SENDER_VA:#x}, +{SENDER_LEN:#x}).",
        f"add SwitchIngress.router_mac hdr.ethernet.dst_addr:{TOR_MAC} SwitchIngress.routable()",
    ]
    for h in LOCAL:
        lines.append(f"add SwitchIngress.routes hdr.ipv4.dst_addr:{h['ip']}/32 "
                     f"SwitchIngress.to_host(port:{h['port']}, dmac:{h['mac']})")
    lines.append(f"add SwitchIngress.routes hdr.ipv4.dst_addr:10.0.2.0/24 SwitchIngress.to_group(group:{ECMP_GROUP})")
    for b in range(16):
        lines.append(f"add SwitchIngress.ecmp ig_md.group:{ECMP_GROUP} ig_md.bucket:{b} "
                     f"SwitchIngress.to_nexthop(port:{UPLINK}, dmac:{AGG_MAC})")
    lines += [
        f"add SwitchIngress.rx_guard hdr.ipv4.dst_addr:{D1['ip']} hdr.bth.dst_qp:{D1['qpn']:#x} SwitchIngress.guard(sender:{A1['ip']})",
        f"add SwitchIngress.rx_guard hdr.ipv4.dst_addr:{D1['ip']} hdr.bth.dst_qp:{MC_ID:#x} SwitchIngress.guard(sender:{A1['ip']})",
        f"add SwitchIngress.mc_group hdr.ipv4.src_addr:{A1['ip']} hdr.bth.dst_qp:{MC_ID:#x} SwitchIngress.replicate(mgid:{MGID})",
        f"add SwitchEgress.mc_copy eg_intr_md.egress_rid:1 SwitchEgress.to_receiver(ip:{D1['ip']}, smac:{TOR_MAC}, dmac:{D1['mac']}, qpn:{D1['qpn']:#x})",
        f"add SwitchEgress.mc_copy eg_intr_md.egress_rid:2 SwitchEgress.to_branch(ip:{A2['ip']}, smac:{TOR_MAC}, dmac:{AGG_MAC})",
        f"add SwitchEgress.mc_va eg_intr_md.egress_rid:1 hdr.reth.va:{SENDER_VA:#x}..{SENDER_VA + SENDER_LEN - 1:#x} "
        f"SwitchEgress.translate(offset:{offset:#x}, rkey:{D1['rkey']:#x})",
    ]
    for r in (D1, A2, B2):
        lines.append(f"add SwitchEgress.ack_member hdr.ipv4.dst_addr:{A1['ip']} hdr.bth.dst_qp:{A1['qpn']:#x} "
                     f"hdr.ipv4.src_addr:{r['ip']} SwitchEgress.member(group:{GROUP}, slot:{r['slot']}, size:{SIZE}, dst1:{D1['ip']})")
    lines += [
        "# One PRE node per next-hop group of Algorithm 1 at tor1: RID 1 -> d1, RID 2 -> agg.",
        f"mc_mgrp_create {MGID}",
        f"mc_node_create 1 {D1['port']}",
        f"mc_node_create 2 {UPLINK}",
        f"mc_node_associate {MGID} 0",
        f"mc_node_associate {MGID} 1",
    ]
    return "\n".join(lines) + "\n"


def hexs(pkt):
    b = bytes(pkt)
    return " ".join(b[i:i + 16].hex() for i in range(0, len(b), 16))


def data(tag, n):
    return Raw((tag.encode() * n)[:n])


def udp_to(src, dst_ip, sport, ip_id, dport=4791, src_ip=None, src_mac=None):
    return (Ether(src=src_mac or src.get("mac", AGG_MAC), dst=TOR_MAC)
            / IP(src=src_ip or src["ip"], dst=dst_ip, id=ip_id, flags="DF", ttl=64, tos=0x02)
            / UDP(sport=sport, dport=dport, chksum=0))


def request(opcode, psn, payload, dst_ip=None, qp=MC_ID, va=None, rkey=0, src=A1, ip_id=0x1000,
            ackreq=0, src_ip=None):
    p = udp_to(src, dst_ip or D1["ip"], src["sport"], ip_id, src_ip=src_ip) / BTH(
        opcode=opcode, dqpn=qp, psn=psn, ackreq=ackreq, padcount=(-len(payload)) & 3)
    if va is not None:
        p = p / RETH(va=va, rkey=rkey, dlen=len(payload))
    return p / payload


def routed(pkt, dmac):
    """`pkt` routed unchanged but for MACs and TTL (the ICRC masks the TTL: still valid)."""
    out = pkt.copy()
    out[Ether].src = TOR_MAC
    out[Ether].dst = dmac
    out[IP].ttl -= 1
    del out[IP].chksum
    return Ether(bytes(out))


def copy(pkt, dmac, ip, qpn=None, va_rkey=None):
    """The copy of a data packet for one branch; the ICRC stays the sender's."""
    bth = pkt[BTH]
    stale_icrc = int.from_bytes(bytes(pkt)[-4:], "big")
    out = (Ether(src=TOR_MAC, dst=dmac)
           / IP(src=pkt[IP].src, dst=ip, id=pkt[IP].id, flags=pkt[IP].flags, ttl=pkt[IP].ttl - 1,
                tos=pkt[IP].tos)
           / UDP(sport=pkt[UDP].sport, dport=4791, chksum=0)
           / BTH(opcode=bth.opcode, solicited=bth.solicited, padcount=bth.padcount, pkey=bth.pkey,
                 dqpn=bth.dqpn if qpn is None else qpn, ackreq=bth.ackreq, psn=bth.psn,
                 icrc=stale_icrc))
    if RETH in pkt:
        reth = pkt[RETH]
        va, rkey = (reth.va, reth.rkey) if va_rkey is None else va_rkey
        out = out / RETH(va=va, rkey=rkey, dlen=reth.dlen) / Raw(bytes(reth.payload))
    else:
        out = out / Raw(bytes(bth.payload))
    assert len(out) == len(pkt)
    return out


def to_d1(pkt):
    va_rkey = None
    if RETH in pkt:
        va_rkey = ((pkt[RETH].va - SENDER_VA + D1["va"]) & M64, D1["rkey"])
    return copy(pkt, D1["mac"], D1["ip"], qpn=D1["qpn"], va_rkey=va_rkey)


def to_branch(pkt):
    return copy(pkt, AGG_MAC, A2["ip"])


def ack(r, psn, msn, syndrome=0, ip_id=0x2000):
    """An ACK (syndrome 0), NAK (0x60 | code) or RNR NAK from receiver r to the sender's QP."""
    return udp_to(r, A1["ip"], r["sport"], ip_id) / BTH(opcode=0x11, dqpn=A1["qpn"], psn=psn) / AETH(
        syndrome=syndrome, msn=msn)


def to_sender(pkt, psn=None):
    """What a1 gets for a receiver's ACK/NAK/CNP: source IP DST_1, fresh ICRC."""
    bth = pkt[BTH]
    out = (Ether(src=TOR_MAC, dst=A1["mac"])
           / IP(src=D1["ip"], dst=A1["ip"], id=pkt[IP].id, flags=pkt[IP].flags, ttl=pkt[IP].ttl - 1,
                tos=pkt[IP].tos)
           / UDP(sport=pkt[UDP].sport, dport=4791, chksum=0)
           / BTH(opcode=bth.opcode, becn=bth.becn, pkey=bth.pkey, dqpn=bth.dqpn,
                 psn=bth.psn if psn is None else psn))
    if AETH in pkt:
        out = out / AETH(syndrome=pkt[AETH].syndrome, msn=pkt[AETH].msn)
    else:
        out = out / CNPPadding()
    return out


def reg(psn):
    return (psn & PSN_MASK) << 8


def emit(name, title, body):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# {title}\n# Generated by make_mcrdma_stf.py (expected bytes from scapy, not from pisa).\n")
        f.write(setup())
        f.write("\n")
        f.write(body)
    print("wrote", name)


def replicate():
    only = request(0x0A, 5, data("mc-write ", 40), va=SENDER_VA + 0x100, ackreq=1)
    first = request(0x06, 6, data("F", 64), va=SENDER_VA + 0x200, ip_id=0x1001)
    middle = request(0x07, 7, data("M", 64), ip_id=0x1002)
    send = request(0x04, 8, data("send ", 20), ip_id=0x1003, ackreq=1)
    outside = request(0x0A, 9, data("X", 16), va=SENDER_VA + SENDER_LEN, ip_id=0x1004)
    no_rule = request(0x0A, 1, data("u", 16), dst_ip=A2["ip"], qp=0x800002, va=0x10, ip_id=0x1005)
    plain = udp_to(B1, C1["ip"], 1234, 0x1006, dport=5000) / data("plain", 10)
    return f"""\
# WRITE ONLY / FIRST (RETH), MIDDLE and SEND ONLY of the group are replicated at the bifurcation
# switch: d1's copy (its last replication point) gets d1's IP, QPN, and on FIRST/ONLY its VA and
# R_key; the branch towards a2 and b2 keeps QPN and VA (tor2 replicates it again), addressed to a2.
packet 0 {hexs(only)}
expect 3 {hexs(to_d1(only))} $
expect 4 {hexs(to_branch(only))} $
wait
packet 0 {hexs(first)}
expect 3 {hexs(to_d1(first))} $
expect 4 {hexs(to_branch(first))} $
wait
packet 0 {hexs(middle)}
expect 3 {hexs(to_d1(middle))} $
expect 4 {hexs(to_branch(middle))} $
wait
packet 0 {hexs(send)}
expect 3 {hexs(to_d1(send))} $
expect 4 {hexs(to_branch(send))} $
wait
# A WRITE past the end of the sender's registered range has no translation for d1: that copy is
# dropped; the branch copy is not translated here and goes on.
packet 0 {hexs(outside)}
expect 4 {hexs(to_branch(outside))} $
wait
# No rule for <a1, 0x800002> here (not a bifurcation switch of that group): routed unchanged.
packet 0 {hexs(no_rule)}
expect 4 {hexs(routed(no_rule, AGG_MAC))} $
wait
# Other traffic is routed as fabric.p4 routes it.
packet 1 {hexs(plain)}
expect 2 {hexs(routed(plain, C1['mac']))} $
wait
check_counter SwitchIngress.replicated({MGID}) packets == 5
check_counter SwitchEgress.drops(1) packets == 1
"""


def guard():
    direct = request(0x0A, 1, data("evil", 16), qp=D1["qpn"], va=D1["va"], rkey=D1["rkey"], src=B1)
    via_mc = request(0x0A, 1, data("evil", 16), va=SENDER_VA, src=B1, ip_id=0x1001)
    other_qp = request(0x0A, 1, data("fine", 16), qp=0x999, va=0x10, src=B1, ip_id=0x1002)
    from_sender = request(0x0A, 3, data("ok", 16), qp=D1["qpn"], va=D1["va"], rkey=D1["rkey"],
                          src_ip=A1["ip"], src=dict(ip=A1["ip"], sport=A1["sport"]), ip_id=0x1003)
    return f"""\
# b1 is outside the group: its WRITE to d1's receiver QP, or to the group's MC_ID, is dropped in
# ingress (never replicated, never reaches d1); a QP of d1 outside any group is not guarded; a
# copy of the sender's data that arrives on the uplink (replicated upstream) passes.
packet 1 {hexs(direct)}
packet 1 {hexs(via_mc)}
packet 1 {hexs(other_qp)}
expect 3 {hexs(routed(other_qp, D1['mac']))} $
wait
packet {UPLINK} {hexs(from_sender)}
expect 3 {hexs(routed(from_sender, D1['mac']))} $
wait
check_counter SwitchIngress.drops(4) packets == 2
check_counter SwitchIngress.replicated({MGID}) packets == 0
"""


def ack_merge():
    a_d1 = ack(D1, 4, 1)
    a_a2 = ack(A2, 2, 1, ip_id=0x2001)
    a_b2 = ack(B2, 5, 2, ip_id=0x2002)
    a_a2b = ack(A2, 4, 2, ip_id=0x2003)
    a_b2b = ack(B2, 6, 3, ip_id=0x2004)
    a_d1b = ack(D1, 6, 3, ip_id=0x2005)
    a_a2c = ack(A2, 6, 3, ip_id=0x2006)
    rnr = ack(B2, 7, 3, syndrome=0x20 | 0x0E, ip_id=0x2007)
    stranger = ack(C1, 9, 9, ip_id=0x2008)
    return f"""\
# The paper's ACK example (§IV-C). The group starts at PSN 1 (registers 0 = "acked PSN 0").
# ACK_1 = 4, ACK_2 = 2, ACK_3 = 5 are each not the minimum: dropped, recorded.
packet 3 {hexs(a_d1)}
packet {UPLINK} {hexs(a_a2)}
packet {UPLINK} {hexs(a_b2)}
no_packet
wait
check_register SwitchEgress.acked0({GROUP}) = {reg(4)}
check_register SwitchEgress.acked1({GROUP}) = {reg(2)}
check_register SwitchEgress.acked2({GROUP}) = {reg(5)}
# ACK'_2 = 4 replaces ACK_2 unread and is the minimum of <4, 4, 5>: forwarded to the sender,
# source IP DST_1 (d1), ICRC recomputed.
packet {UPLINK} {hexs(a_a2b)}
expect 0 {hexs(to_sender(a_a2b))} $
wait
# b2 ACKs 6: <4, 4, 6>, not the minimum. d1 ACKs 6: <6, 4, 6>, not the minimum. a2 ACKs 6: the
# minimum rises to 6, forwarded.
packet {UPLINK} {hexs(a_b2b)}
packet 3 {hexs(a_d1b)}
no_packet
wait
packet {UPLINK} {hexs(a_a2c)}
expect 0 {hexs(to_sender(a_a2c))} $
wait
# An RNR NAK is not merged, only re-addressed; an ACK from a host outside the group is routed
# unchanged.
packet {UPLINK} {hexs(rnr)}
expect 0 {hexs(to_sender(rnr))} $
wait
packet 2 {hexs(stranger)}
expect 0 {hexs(routed(stranger, A1['mac']))} $
wait
check_counter SwitchEgress.acks_forwarded({GROUP}) packets == 2
check_counter SwitchEgress.drops(2) packets == 5
"""


def nak():
    a_d1 = ack(D1, 1, 1)
    a_a2 = ack(A2, 2, 1, ip_id=0x2001)
    a_b2 = ack(B2, 5, 2, ip_id=0x2002)
    n_a2 = ack(A2, 4, 2, syndrome=0x60, ip_id=0x2003)
    n_d1 = ack(D1, 2, 1, syndrome=0x60, ip_id=0x2004)
    return f"""\
# The paper's NAK example (§IV-C): records <ACK_1 = 1, ACK_2 = 2, ACK_3 = 5>, NAK_2 = 4 is
# forwarded as NAK min{{3, 1, 2, 5}} + 1 = 2.
packet 3 {hexs(a_d1)}
packet {UPLINK} {hexs(a_a2)}
packet {UPLINK} {hexs(a_b2)}
no_packet
wait
packet {UPLINK} {hexs(n_a2)}
expect 0 {hexs(to_sender(n_a2, psn=2))} $
wait
check_register SwitchEgress.acked1({GROUP}) = {reg(3)}
# d1's own NAK 2 (it has 1): min{{1, 3, 5}} + 1 = 2, unchanged.
packet 3 {hexs(n_d1)}
expect 0 {hexs(to_sender(n_d1, psn=2))} $
wait
check_counter SwitchEgress.naks_forwarded({GROUP}) packets == 2
"""


def cnp():
    def cnp_from(r, ip_id):
        return udp_to(r, A1["ip"], r["sport"], ip_id) / BTH(
            opcode=0x81, becn=1, dqpn=A1["qpn"], psn=0) / CNPPadding()
    c_a2 = cnp_from(A2, 0x3000)
    c_b2 = cnp_from(B2, 0x3001)
    c_c1 = cnp_from(C1, 0x3002)
    return f"""\
# CNPs from any receiver reach the sender re-addressed from DST_1 (§IV-D), ICRC recomputed; a CNP
# from a host outside the group is routed unchanged.
packet {UPLINK} {hexs(c_a2)}
expect 0 {hexs(to_sender(c_a2))} $
wait
packet {UPLINK} {hexs(c_b2)}
expect 0 {hexs(to_sender(c_b2))} $
wait
packet 2 {hexs(c_c1)}
expect 0 {hexs(routed(c_c1, A1['mac']))} $
wait
check_counter SwitchEgress.cnps_forwarded({GROUP}) packets == 2
"""


if __name__ == "__main__":
    emit("mcrdma_replicate.stf", "mcrdma.p4: replication at a bifurcation switch, per-receiver rewrite", replicate())
    emit("mcrdma_guard.stf", "mcrdma.p4: a host outside the group cannot write through the switch", guard())
    emit("mcrdma_ack_merge.stf", "mcrdma.p4: ACK merging at the sender's ToR", ack_merge())
    emit("mcrdma_nak.stf", "mcrdma.p4: NAK PSN := min{NAK - 1, ACKs} + 1", nak())
    emit("mcrdma_cnp.stf", "mcrdma.p4: CNPs re-addressed to the sender", cnp())
