#!/usr/bin/python3
"""Writes the p4ce_*.stf golden tests for p4/programs/p4ce.p4.

Expected output bytes are built here with scapy (its RoCE layer, scapy.contrib.roce, computes
the ICRC) from what the program is specified to do, never from the emulator's output:
- a scattered WRITE copy is the leader's packet rebuilt with the replica's addresses, QPN,
  PSN (+ the replica's PSN offset), RETH VA (+ the replica's base) and R_key; its ICRC is the
  leader's, now stale (the switch cannot recompute it over an arbitrary payload: replicas run
  with ICRC checking off, see the header comment of p4ce.p4);
- an ACK or NAK forwarded to the leader is rebuilt with the leader's addresses, QPN, PSN and
  MSN (- the replica's offsets) and, for an ACK, the group's minimum credit code; scapy
  computes its ICRC, which the switch must have recomputed to the same value.

scapy 2.5 has no RETH layer; the small one below follows the IBA layout (VA u64, R_Key u32,
DMA length u32).

Run with Debian's python3 (python3-scapy):  /usr/bin/python3 make_p4ce_stf.py
"""
import os

from scapy.contrib.roce import AETH, BTH
from scapy.fields import IntField, XIntField, XLongField
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

HERE = os.path.dirname(os.path.abspath(__file__))


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dlen", 0)]


# The example group of p4/programs/p4ce.tables.yaml.
SWITCH_MAC = "02:00:00:00:00:fe"
SWITCH_IP = "10.0.0.100"
BCAST_QP = 0x000100
AGGR_QP = 0x000200
VRKEY = 0xCAFEF00D
VSIZE = 0x10000
GROUP = 1
MGID = 1
CPU_PORT = 64

LEADER = dict(ep=1, port=0, mac="02:00:00:00:00:01", ip="10.0.0.1", qpn=0x000011,
              sport=0xC011, conn_sport=0xC100)
R1 = dict(ep=2, port=1, mac="02:00:00:00:00:02", ip="10.0.0.2", qpn=0x000102,
          sport=0xC021, conn_sport=0xC102, slot=0, psn_delta=0x000500, msn_delta=0,
          va=0x00007F0000100000, rkey=0x11112222)
R2 = dict(ep=3, port=2, mac="02:00:00:00:00:03", ip="10.0.0.3", qpn=0x000203,
          sport=0xC031, conn_sport=0xC103, slot=1, psn_delta=0xFFFF00, msn_delta=0x000010,
          va=0x00007F2200000000, rkey=0x33334444)
OUTSIDER = dict(port=3, mac="02:00:00:00:00:04", ip="10.0.0.4", sport=0xC041)
HOSTS = [LEADER, R1, R2, OUTSIDER]

PSN_MASK = 0xFFFFFF


def setup(quorum):
    lines = [
        f"# A leader and two replicas behind the switch {SWITCH_IP} ({SWITCH_MAC}), quorum f = {quorum}:",
        f"#   port 0 leader  {LEADER['ip']} QPN {LEADER['qpn']:#x}  endpoint {LEADER['ep']}",
        f"#   port 1 replica {R1['ip']} QPN {R1['qpn']:#x} endpoint {R1['ep']}, slot 0, PSN = leader + {R1['psn_delta']:#x}",
        f"#   port 2 replica {R2['ip']} QPN {R2['qpn']:#x} endpoint {R2['ep']}, slot 1, PSN = leader + {R2['psn_delta']:#x}, MSN = leader + {R2['msn_delta']:#x}",
        f"#   port 3 a host outside the group {OUTSIDER['ip']}",
        f"# BCast QP {BCAST_QP:#x}, Aggr QP {AGGR_QP:#x}, virtual R_key {VRKEY:#x}, virtual buffer {VSIZE:#x} bytes.",
        f"add SwitchIngress.switch_qp hdr.ipv4.dst_addr:{SWITCH_IP} hdr.bth.dst_qp:{BCAST_QP:#x} "
        f"SwitchIngress.bcast(group:{GROUP}, mgid:{MGID}, leader_ip:{LEADER['ip']}, vrkey:{VRKEY:#x}, vsize:{VSIZE:#x})",
        f"add SwitchIngress.switch_qp hdr.ipv4.dst_addr:{SWITCH_IP} hdr.bth.dst_qp:{AGGR_QP:#x} "
        f"SwitchIngress.aggr(group:{GROUP}, quorum:{quorum}, leader_ep:{LEADER['ep']})",
        f"add SwitchIngress.switch_qp hdr.ipv4.dst_addr:{SWITCH_IP} hdr.bth.dst_qp:1 SwitchIngress.to_cpu(cpu_port:{CPU_PORT})",
    ]
    for r in (R1, R2):
        lines.append(
            f"add SwitchIngress.aggr_replica hdr.bth.dst_qp:{AGGR_QP:#x} hdr.ipv4.src_addr:{r['ip']} "
            f"SwitchIngress.from_replica(slot:{r['slot']}, psn_delta:{r['psn_delta']:#x}, msn_delta:{r['msn_delta']:#x})")
    lines.append(
        f"add SwitchIngress.conn_leader ig_md.leader_ep:{LEADER['ep']} SwitchIngress.to_leader("
        f"mac:{LEADER['mac']}, ip:{LEADER['ip']}, qpn:{LEADER['qpn']:#x}, udp_sport:{LEADER['conn_sport']:#x}, port:{LEADER['port']})")
    for r in (R1, R2):
        lines.append(
            f"add SwitchEgress.conn_replica eg_intr_md.egress_rid:{r['ep']} SwitchEgress.to_replica("
            f"mac:{r['mac']}, ip:{r['ip']}, qpn:{r['qpn']:#x}, udp_sport:{r['conn_sport']:#x}, "
            f"psn_delta:{r['psn_delta']:#x}, va:{r['va']:#x}, rkey:{r['rkey']:#x})")
    for h in HOSTS:
        lines.append(f"add SwitchIngress.l2_forward hdr.ethernet.dst_addr:{h['mac']} SwitchIngress.l2_port(port:{h['port']})")
    lines += [
        "# The group's multicast group: one PRE node per replica, RID = endpoint id.",
        f"mc_mgrp_create {MGID}",
        f"mc_node_create {R1['ep']} {R1['port']}",
        f"mc_node_create {R2['ep']} {R2['port']}",
        f"mc_node_associate {MGID} 0",
        f"mc_node_associate {MGID} 1",
    ]
    return "\n".join(lines) + "\n"


def hexs(pkt):
    b = bytes(pkt)
    return " ".join(b[i:i + 16].hex() for i in range(0, len(b), 16))


def data(tag, n):
    return Raw((tag.encode() * n)[:n])


def roce(src, dst_mac, dst_ip, sport, ip_id, tos=0x02):
    return (Ether(src=src["mac"], dst=dst_mac)
            / IP(src=src["ip"], dst=dst_ip, id=ip_id, flags="DF", ttl=64, tos=tos)
            / UDP(sport=sport, dport=4791, chksum=0))


def write(opcode, psn, payload, va=None, rkey=VRKEY, dlen=None, src=LEADER, qp=BCAST_QP,
          ip_id=0x1000, ackreq=0):
    p = roce(src, SWITCH_MAC, SWITCH_IP, src["sport"], ip_id) / BTH(
        opcode=opcode, dqpn=qp, psn=psn, ackreq=ackreq, padcount=(-len(payload)) & 3)
    if va is not None:
        p = p / RETH(va=va, rkey=rkey, dlen=len(payload) if dlen is None else dlen)
    return p / payload


def scattered(pkt, r):
    """The copy of a leader's WRITE that replica `r` must get."""
    bth = pkt[BTH]
    stale_icrc = int.from_bytes(bytes(pkt)[-4:], "big")
    out = (Ether(src=SWITCH_MAC, dst=r["mac"])
           / IP(src=SWITCH_IP, dst=r["ip"], id=pkt[IP].id, flags=pkt[IP].flags, ttl=pkt[IP].ttl,
                tos=pkt[IP].tos)
           / UDP(sport=r["conn_sport"], dport=4791, chksum=0)
           / BTH(opcode=bth.opcode, solicited=bth.solicited, padcount=bth.padcount, pkey=bth.pkey,
                 dqpn=r["qpn"], ackreq=bth.ackreq, psn=(bth.psn + r["psn_delta"]) & PSN_MASK,
                 icrc=stale_icrc))
    if RETH in pkt:
        reth = pkt[RETH]
        out = out / RETH(va=r["va"] + reth.va, rkey=r["rkey"], dlen=reth.dlen)
        out = out / Raw(bytes(reth.payload))
    else:
        out = out / Raw(bytes(bth.payload))
    assert len(out) == len(pkt)
    return out


def ack(r, leader_psn, credit, leader_msn, syndrome_type=0, ip_id=0x2000, aggr_qp=AGGR_QP):
    """An ACK (or NAK, syndrome_type 3 with `credit` the NAK code) from replica r, in r's spaces."""
    syndrome = (syndrome_type << 5) | credit
    return roce(r, SWITCH_MAC, SWITCH_IP, r["sport"], ip_id) / BTH(
        opcode=0x11, dqpn=aggr_qp, psn=(leader_psn + r["psn_delta"]) & PSN_MASK) / AETH(
        syndrome=syndrome, msn=(leader_msn + r["msn_delta"]) & PSN_MASK)


def to_leader(pkt, r, credit=None, leader=LEADER):
    """What the leader gets from replica r's ACK/NAK `pkt`; `credit` = the group's minimum."""
    aeth = pkt[AETH]
    syndrome = aeth.syndrome if credit is None else (aeth.syndrome & 0xE0) | credit
    bth = pkt[BTH]
    return (Ether(src=SWITCH_MAC, dst=leader["mac"])
            / IP(src=SWITCH_IP, dst=leader["ip"], id=pkt[IP].id, flags=pkt[IP].flags,
                 ttl=pkt[IP].ttl, tos=pkt[IP].tos)
            / UDP(sport=leader["conn_sport"], dport=4791, chksum=0)
            / BTH(opcode=0x11, pkey=bth.pkey, dqpn=leader["qpn"],
                  psn=(bth.psn - r["psn_delta"]) & PSN_MASK)
            / AETH(syndrome=syndrome, msn=(aeth.msn - r["msn_delta"]) & PSN_MASK))


def num_recv_index(leader_psn, group=GROUP):
    return (group << 8) | (leader_psn & 0xFF)


def emit(name, title, quorum, body):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# {title}\n# Generated by make_p4ce_stf.py (expected bytes from scapy, not from pisa).\n")
        f.write(setup(quorum))
        f.write("\n")
        f.write(body)
    print("wrote", name)


def write_only():
    psn = 0x0ABC12
    w = write(0x0A, psn, data("entry-1 ", 40), va=0x40, ackreq=1)
    # A frame from the leader has a valid ICRC (scapy computed it); a copy keeps it.
    return f"""\
# The leader's RDMA WRITE ONLY (PSN {psn:#x}, virtual VA 0x40, 40 bytes) to the BCast QP goes to
# both replicas, each with its own MAC/IP/QPN/UDP source port, PSN, VA and R_key; none goes back
# to the leader.
packet 0 {hexs(w)}
expect 1 {hexs(scattered(w, R1))} $
expect 2 {hexs(scattered(w, R2))} $
wait
check_counter SwitchIngress.writes_scattered({GROUP}) packets == 1
check_register SwitchIngress.num_recv({num_recv_index(psn)}) = 0
"""


def multi_packet():
    psn = 0xFFFFFE  # the PSNs wrap around in the leader's space: FFFFFE, FFFFFF, 000000
    first = write(0x06, psn, data("A", 256), va=0x1000, dlen=256 + 256 + 44, ip_id=0x1001)
    middle = write(0x07, (psn + 1) & PSN_MASK, data("B", 256), ip_id=0x1002)
    last = write(0x08, (psn + 2) & PSN_MASK, data("C", 44), ip_id=0x1003, ackreq=1)
    body = "# A 556-byte WRITE in three packets (PMTU 256): FIRST carries the RETH (rewritten per\n"
    body += "# replica), MIDDLE and LAST only get the Ethernet/IP/UDP/BTH rewrites; PSNs move into each\n"
    body += "# replica's space (R2's offset wraps them below the leader's).\n"
    for p in (first, middle, last):
        body += f"packet 0 {hexs(p)}\n"
        body += f"expect 1 {hexs(scattered(p, R1))} $\n"
        body += f"expect 2 {hexs(scattered(p, R2))} $\n"
    body += "wait\n"
    body += f"check_counter SwitchIngress.writes_scattered({GROUP}) packets == 3\n"
    return body


def gather_f2():
    psn = 0x000321
    msn = 7
    w = write(0x0A, psn, data("entry-2 ", 24), va=0x80, ackreq=1)
    a1 = ack(R1, psn, credit=8, leader_msn=msn, ip_id=0x2001)    # 16 credits
    a2 = ack(R2, psn, credit=6, leader_msn=msn, ip_id=0x3001)    # 8 credits: the minimum
    a2dup = ack(R2, psn, credit=9, leader_msn=msn, ip_id=0x3002)
    w_again = write(0x0A, psn, data("entry-2 ", 24), va=0x80, ackreq=1, ip_id=0x1004)
    idx = num_recv_index(psn)
    return f"""\
# f = 2 of 2 replicas: the first ACK is absorbed, the second is the f-th and goes to the leader.
packet 0 {hexs(w)}
expect 1 {hexs(scattered(w, R1))} $
expect 2 {hexs(scattered(w, R2))} $
wait
check_register SwitchIngress.num_recv({idx}) = 0
# R1 ACKs (credit code 8) in its PSN space: counted, dropped in ingress.
packet 1 {hexs(a1)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 1
check_register SwitchIngress.credit0({GROUP}) = 8
check_register SwitchIngress.credit1({GROUP}) = 31
check_counter SwitchIngress.drops(6) packets == 1
# R2 ACKs (credit code 6): the 2nd ACK of PSN {psn:#x} reaches the leader with the leader's QPN,
# PSN and MSN, the minimum credit code 6 and a recomputed ICRC.
packet 2 {hexs(a2)}
expect 0 {hexs(to_leader(a2, R2, credit=6))} $
wait
check_register SwitchIngress.num_recv({idx}) = 2
check_register SwitchIngress.credit1({GROUP}) = 6
check_counter SwitchIngress.acks_forwarded({GROUP}) packets == 1
# A duplicate ACK from R2 (credit code 9 now) is dropped uncounted: NumRecv counts replicas
# (R2 had acknowledged PSN {psn:#x} already); its credit is remembered.
packet 2 {hexs(a2dup)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 2
check_register SwitchIngress.credit1({GROUP}) = 9
check_counter SwitchIngress.drops(6) packets == 1
check_counter SwitchIngress.drops(9) packets == 1
# The leader retransmits PSN {psn:#x}: NumRecv and the replicas' Acked bits start again from 0.
packet 0 {hexs(w_again)}
expect 1 {hexs(scattered(w_again, R1))} $
expect 2 {hexs(scattered(w_again, R2))} $
wait
check_register SwitchIngress.num_recv({idx}) = 0
check_register SwitchIngress.acked0({idx}) = 0
check_register SwitchIngress.acked1({idx}) = 0
"""


def dup_ack():
    psn = 0x000321
    msn = 7
    w = write(0x0A, psn, data("entry-2 ", 24), va=0x80, ackreq=1)
    a1 = ack(R1, psn, credit=8, leader_msn=msn, ip_id=0x2001)
    a1dup = ack(R1, psn, credit=8, leader_msn=msn, ip_id=0x2002)
    a2 = ack(R2, psn, credit=6, leader_msn=msn, ip_id=0x3001)
    w_again = write(0x0A, psn, data("entry-2 ", 24), va=0x80, ackreq=1, ip_id=0x1004)
    a1again = ack(R1, psn, credit=8, leader_msn=msn, ip_id=0x2003)
    a1again_dup = ack(R1, psn, credit=8, leader_msn=msn, ip_id=0x2004)
    a2again = ack(R2, psn, credit=6, leader_msn=msn, ip_id=0x3003)
    idx = num_recv_index(psn)
    return f"""\
# §IV-C: the f-th ACK goes to the leader because f *replicas* + the leader are a majority, so
# NumRecv counts each replica once per PSN. With f = 2, R1 acknowledging PSN {psn:#x} twice (its
# NIC re-ACKs a duplicated or retransmitted WRITE) must not make a quorum without R2.
packet 0 {hexs(w)}
expect 1 {hexs(scattered(w, R1))} $
expect 2 {hexs(scattered(w, R2))} $
wait
packet 1 {hexs(a1)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 1
check_register SwitchIngress.acked0({idx}) = 1
check_register SwitchIngress.acked1({idx}) = 0
# R1 again: dropped as a duplicate (drop reason 9), NumRecv stays 1, nothing to the leader.
packet 1 {hexs(a1dup)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 1
check_counter SwitchIngress.drops(6) packets == 1
check_counter SwitchIngress.drops(9) packets == 1
check_counter SwitchIngress.acks_forwarded({GROUP}) packets == 0
# R2 is the second replica: its ACK is the quorum and reaches the leader (minimum credit 6).
packet 2 {hexs(a2)}
expect 0 {hexs(to_leader(a2, R2, credit=6))} $
wait
check_register SwitchIngress.num_recv({idx}) = 2
check_register SwitchIngress.acked1({idx}) = 1
check_counter SwitchIngress.acks_forwarded({GROUP}) packets == 1
# The leader retransmits PSN {psn:#x} (go-back-N): the bits are cleared, so R1's ACK of the new
# copy counts again, its duplicate does not, and R2's completes the quorum again.
packet 0 {hexs(w_again)}
expect 1 {hexs(scattered(w_again, R1))} $
expect 2 {hexs(scattered(w_again, R2))} $
wait
check_register SwitchIngress.acked0({idx}) = 0
check_register SwitchIngress.acked1({idx}) = 0
packet 1 {hexs(a1again)}
packet 1 {hexs(a1again_dup)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 1
check_counter SwitchIngress.drops(9) packets == 2
packet 2 {hexs(a2again)}
expect 0 {hexs(to_leader(a2again, R2, credit=6))} $
wait
check_register SwitchIngress.num_recv({idx}) = 2
check_counter SwitchIngress.acks_forwarded({GROUP}) packets == 2
"""


def gather_f1():
    psn = 0x123456
    msn = 0x20
    w = write(0x0A, psn, data("entry-3 ", 32), va=0x0, ackreq=1)
    a2 = ack(R2, psn, credit=12, leader_msn=msn, ip_id=0x3003)   # first ACK: forwarded
    a1 = ack(R1, psn, credit=10, leader_msn=msn, ip_id=0x2003)   # second: absorbed
    w2 = write(0x0A, psn + 1, data("entry-4 ", 32), va=0x20, ackreq=1, ip_id=0x1005)
    b1 = ack(R1, psn + 1, credit=14, leader_msn=msn + 1, ip_id=0x2004)
    # After b1 the slots hold R1 = 14, R2 = 12: the minimum is R2's older 12.
    return f"""\
# f = 1 of 2 replicas: the first ACK of a PSN goes to the leader at once, later ones are absorbed.
packet 0 {hexs(w)}
expect 1 {hexs(scattered(w, R1))} $
expect 2 {hexs(scattered(w, R2))} $
wait
# R2 first (credit code 12; R1's slot is still unlimited, 31): forwarded with 12.
packet 2 {hexs(a2)}
expect 0 {hexs(to_leader(a2, R2, credit=12))} $
wait
# R1 second (credit code 10): absorbed, but its credit is remembered.
packet 1 {hexs(a1)}
no_packet
wait
check_register SwitchIngress.num_recv({num_recv_index(psn)}) = 2
check_register SwitchIngress.credit0({GROUP}) = 10
check_register SwitchIngress.credit1({GROUP}) = 12
# Next entry: R1 answers first with credit code 14; the leader is told min(14, 12) = 12.
packet 0 {hexs(w2)}
expect 1 {hexs(scattered(w2, R1))} $
expect 2 {hexs(scattered(w2, R2))} $
wait
packet 1 {hexs(b1)}
expect 0 {hexs(to_leader(b1, R1, credit=12))} $
wait
check_register SwitchIngress.num_recv({num_recv_index(psn + 1)}) = 1
check_register SwitchIngress.credit0({GROUP}) = 14
check_counter SwitchIngress.acks_forwarded({GROUP}) packets == 2
check_counter SwitchIngress.drops(6) packets == 1
"""


def nak():
    psn = 0x000777
    msn = 3
    w = write(0x0A, psn, data("entry-5 ", 16), va=0x100, ackreq=1)
    # R1 saw a PSN gap: NAK PSN sequence error (0x60) carrying its expected PSN.
    n1 = ack(R1, psn, credit=0x00, leader_msn=msn, syndrome_type=3, ip_id=0x2005)
    # R2 has no receive WQE: RNR NAK (type 1) with timer code 0x0e.
    rnr = ack(R2, psn, credit=0x0E, leader_msn=msn, syndrome_type=1, ip_id=0x3005)
    return f"""\
# NAKs are not counted: each goes to the leader at once (f = 2 here), in the leader's spaces,
# with its syndrome untouched and a recomputed ICRC.
packet 0 {hexs(w)}
expect 1 {hexs(scattered(w, R1))} $
expect 2 {hexs(scattered(w, R2))} $
wait
packet 1 {hexs(n1)}
expect 0 {hexs(to_leader(n1, R1))} $
wait
packet 2 {hexs(rnr)}
expect 0 {hexs(to_leader(rnr, R2))} $
wait
check_register SwitchIngress.num_recv({num_recv_index(psn)}) = 0
check_register SwitchIngress.credit0({GROUP}) = 31
check_register SwitchIngress.credit1({GROUP}) = 31
check_counter SwitchIngress.naks_forwarded({GROUP}) packets == 2
check_counter SwitchIngress.acks_forwarded({GROUP}) packets == 0
"""


def security():
    psn = 0x000500
    idx = num_recv_index(psn)
    w = write(0x0A, psn, data("entry-6 ", 16), va=0x200, ackreq=1)
    a1 = ack(R1, psn, credit=8, leader_msn=1, ip_id=0x2006)
    # R1 (a deposed leader, say) writes to the BCast QP with the right virtual R_key.
    forged_src = write(0x0A, psn, data("forged! ", 16), va=0x200, src=R1, ip_id=0x4001)
    forged_middle = write(0x07, psn + 1, data("forged! ", 256), src=OUTSIDER, ip_id=0x4002)
    bad_rkey = write(0x0A, psn, data("badkey  ", 16), va=0x200, rkey=0x11112222, ip_id=0x4003)
    oob = write(0x0A, psn, data("too far ", 32), va=VSIZE - 16, ip_id=0x4004)
    high_va = write(0x06, psn, data("H", 256), va=0x100000000, dlen=512, ip_id=0x4005)
    read = write(0x0C, psn, b"", va=0x0, dlen=64, ip_id=0x4006)
    bad_sum = write(0x0A, psn, data("entry-6 ", 16), va=0x200, ackreq=1, ip_id=0x4008)
    good_sum = IP(bytes(bad_sum[IP]))[IP].chksum
    bad_sum[IP].chksum = good_sum ^ 0x0101
    send_to_aggr = (roce(R1, SWITCH_MAC, SWITCH_IP, R1["sport"], 0x4009)
                    / BTH(opcode=0x04, dqpn=AGGR_QP, psn=0x10) / data("send", 8))
    stranger_ack = ack(OUTSIDER | dict(psn_delta=0, msn_delta=0), psn, credit=1, leader_msn=1,
                       ip_id=0x4007)
    return f"""\
# WRITEs to the BCast QP that are not the leader's, carry another R_key or leave the group's
# virtual buffer never reach a replica and leave NumRecv alone; ACKs from outsiders are dropped.
packet 0 {hexs(w)}
expect 1 {hexs(scattered(w, R1))} $
expect 2 {hexs(scattered(w, R2))} $
wait
packet 1 {hexs(a1)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 1
# From R1 (not the leader), with the virtual R_key: dropped (reason 1).
packet 1 {hexs(forged_src)}
# A WRITE MIDDLE (no RETH) from a host outside the group: dropped (reason 1).
packet 3 {hexs(forged_middle)}
# From the leader, with R1's real R_key instead of the virtual one: dropped (reason 2).
packet 0 {hexs(bad_rkey)}
# From the leader, 32 bytes at {VSIZE - 16:#x} of a {VSIZE:#x}-byte buffer: dropped (reason 3).
packet 0 {hexs(oob)}
# From the leader, a VA above 4 GiB: dropped (reason 3).
packet 0 {hexs(high_va)}
# An RDMA READ to the BCast QP: not replicated (reason 4).
packet 0 {hexs(read)}
# The leader's WRITE with a corrupted IPv4 header checksum (reason 7).
packet 0 {hexs(bad_sum)}
# A SEND (not an ACK) to the Aggr QP (reason 4).
packet 1 {hexs(send_to_aggr)}
# An ACK to the Aggr QP from a host outside the group (reason 5).
packet 3 {hexs(stranger_ack)}
no_packet
wait
check_register SwitchIngress.num_recv({idx}) = 1
check_counter SwitchIngress.drops(1) packets == 2
check_counter SwitchIngress.drops(2) packets == 1
check_counter SwitchIngress.drops(3) packets == 2
check_counter SwitchIngress.drops(4) packets == 2
check_counter SwitchIngress.drops(5) packets == 1
check_counter SwitchIngress.drops(7) packets == 1
check_counter SwitchIngress.writes_scattered({GROUP}) packets == 1
"""


def plain():
    # Host-to-host RoCE (the unicast fallback: the leader writing to R1's own QP) is switched
    # unchanged, ICRC and all.
    direct = (roce(LEADER, R1["mac"], R1["ip"], LEADER["sport"], 0x5001)
              / BTH(opcode=0x0A, dqpn=R1["qpn"], psn=0x42, ackreq=1)
              / RETH(va=R1["va"], rkey=R1["rkey"], dlen=8) / data("unicast!", 8))
    back = (roce(R1, LEADER["mac"], LEADER["ip"], R1["sport"], 0x5002)
            / BTH(opcode=0x11, dqpn=0x777, psn=0x42) / AETH(syndrome=0x1F, msn=1))
    # An RDMA CM MAD (UD SEND ONLY to QP1 of the switch's IP) goes to the CPU port.
    mad = (roce(LEADER, SWITCH_MAC, SWITCH_IP, LEADER["sport"], 0x5003)
           / BTH(opcode=0x64, dqpn=1, psn=0) / data("\x00", 8) / data("M", 256))
    unknown = Ether(src=LEADER["mac"], dst="02:00:00:00:00:99", type=0x88B5) / data("who? ", 46)
    return f"""\
# Traffic that is not P4CE's is switched on the destination MAC, unchanged.
packet 0 {hexs(direct)}
expect 1 {hexs(direct)} $
packet 1 {hexs(back)}
expect 0 {hexs(back)} $
wait
# CM MADs to the switch's QP1 go to the CPU port ({CPU_PORT}) for the P4CE agent.
packet 0 {hexs(mad)}
expect {CPU_PORT} {hexs(mad)} $
wait
# Unknown destination MAC: dropped (reason 0).
packet 0 {hexs(unknown)}
no_packet
wait
check_counter SwitchIngress.drops(0) packets == 1
check_counter SwitchIngress.writes_scattered({GROUP}) packets == 0
"""


# A second group on the same hosts: the outsider (port 3) leads it, R1 and R2 replicate it
# through other QPs (their own QPNs, PSN offsets, logs and keys).
G2 = dict(group=2, mgid=2, bcast_qp=0x000101, aggr_qp=0x000201, vrkey=0xBEEF0002, vsize=0x1000)
L2 = OUTSIDER | dict(ep=4, qpn=0x000044, conn_sport=0xC104)
R1G2 = R1 | dict(ep=5, qpn=0x000105, conn_sport=0xC105, slot=0, psn_delta=0x000010,
                 msn_delta=0, va=0x00007F0000900000, rkey=0x55556666)
R2G2 = R2 | dict(ep=6, qpn=0x000206, conn_sport=0xC106, slot=1, psn_delta=0x000020,
                 msn_delta=0, va=0x00007F2200900000, rkey=0x77778888)


def two_groups():
    psn = 0x0004AA
    setup2 = f"""\
# Group 2: leader {L2['ip']} (port 3, QPN {L2['qpn']:#x}, endpoint {L2['ep']}), replicas R1 and R2
# through QPNs {R1G2['qpn']:#x} / {R2G2['qpn']:#x} (endpoints {R1G2['ep']} / {R2G2['ep']}), BCast QP {G2['bcast_qp']:#x},
# Aggr QP {G2['aggr_qp']:#x}, quorum 2, multicast group {G2['mgid']}.
add SwitchIngress.switch_qp hdr.ipv4.dst_addr:{SWITCH_IP} hdr.bth.dst_qp:{G2['bcast_qp']:#x} SwitchIngress.bcast(group:{G2['group']}, mgid:{G2['mgid']}, leader_ip:{L2['ip']}, vrkey:{G2['vrkey']:#x}, vsize:{G2['vsize']:#x})
add SwitchIngress.switch_qp hdr.ipv4.dst_addr:{SWITCH_IP} hdr.bth.dst_qp:{G2['aggr_qp']:#x} SwitchIngress.aggr(group:{G2['group']}, quorum:2, leader_ep:{L2['ep']})
"""
    for r in (R1G2, R2G2):
        setup2 += (f"add SwitchIngress.aggr_replica hdr.bth.dst_qp:{G2['aggr_qp']:#x} hdr.ipv4.src_addr:{r['ip']} "
                   f"SwitchIngress.from_replica(slot:{r['slot']}, psn_delta:{r['psn_delta']:#x}, msn_delta:{r['msn_delta']:#x})\n")
    setup2 += (f"add SwitchIngress.conn_leader ig_md.leader_ep:{L2['ep']} SwitchIngress.to_leader("
               f"mac:{L2['mac']}, ip:{L2['ip']}, qpn:{L2['qpn']:#x}, udp_sport:{L2['conn_sport']:#x}, port:{L2['port']})\n")
    for r in (R1G2, R2G2):
        setup2 += (f"add SwitchEgress.conn_replica eg_intr_md.egress_rid:{r['ep']} SwitchEgress.to_replica("
                   f"mac:{r['mac']}, ip:{r['ip']}, qpn:{r['qpn']:#x}, udp_sport:{r['conn_sport']:#x}, "
                   f"psn_delta:{r['psn_delta']:#x}, va:{r['va']:#x}, rkey:{r['rkey']:#x})\n")
    setup2 += f"""\
mc_mgrp_create {G2['mgid']}
mc_node_create {R1G2['ep']} {R1G2['port']}
mc_node_create {R2G2['ep']} {R2G2['port']}
mc_node_associate {G2['mgid']} 2
mc_node_associate {G2['mgid']} 3
"""
    w1 = write(0x0A, psn, data("group-1 ", 16), va=0x10, ackreq=1)
    w2 = write(0x0A, psn, data("group-2 ", 16), va=0x20, rkey=G2["vrkey"], src=L2,
               qp=G2["bcast_qp"], ackreq=1, ip_id=0x6001)
    a1g1 = ack(R1, psn, credit=4, leader_msn=1, ip_id=0x2101)
    a1g2 = ack(R1G2, psn, credit=20, leader_msn=1, ip_id=0x2102, aggr_qp=G2["aggr_qp"])
    a2g2 = ack(R2G2, psn, credit=18, leader_msn=1, ip_id=0x3102, aggr_qp=G2["aggr_qp"])
    a2g1 = ack(R2, psn, credit=5, leader_msn=1, ip_id=0x3101)
    cross = write(0x0A, psn, data("cross!! ", 16), va=0x10, src=L2, ip_id=0x6002)
    return setup2 + f"""\
# Both leaders write PSN {psn:#x}: each group's WRITE reaches the replicas through that group's
# connections.
packet 0 {hexs(w1)}
expect 1 {hexs(scattered(w1, R1))} $
expect 2 {hexs(scattered(w1, R2))} $
packet 3 {hexs(w2)}
expect 1 {hexs(scattered(w2, R1G2))} $
expect 2 {hexs(scattered(w2, R2G2))} $
wait
# R1 ACKs both; each ACK counts in its own group's NumRecv and credit slot.
packet 1 {hexs(a1g1)}
packet 1 {hexs(a1g2)}
no_packet
wait
check_register SwitchIngress.num_recv({num_recv_index(psn)}) = 1
check_register SwitchIngress.num_recv({num_recv_index(psn, 2)}) = 1
check_register SwitchIngress.credit0({GROUP}) = 4
check_register SwitchIngress.credit0(2) = 20
# R2's ACK of group 2 completes group 2 only: to leader 2 with group 2's minimum (18).
packet 2 {hexs(a2g2)}
expect 3 {hexs(to_leader(a2g2, R2G2, credit=18, leader=L2))} $
wait
check_register SwitchIngress.num_recv({num_recv_index(psn)}) = 1
# R2's ACK of group 1 completes group 1: to leader 1 with min(4, 5) = 4.
packet 2 {hexs(a2g1)}
expect 0 {hexs(to_leader(a2g1, R2, credit=4))} $
wait
# Group 2's leader is not group 1's: its WRITE to group 1's BCast QP is dropped.
packet 3 {hexs(cross)}
no_packet
wait
check_counter SwitchIngress.drops(1) packets == 1
check_counter SwitchIngress.writes_scattered(1) packets == 1
check_counter SwitchIngress.writes_scattered(2) packets == 1
check_counter SwitchIngress.acks_forwarded(1) packets == 1
check_counter SwitchIngress.acks_forwarded(2) packets == 1
"""


def self_check():
    """The RoCE layers agree with the RC WRITE ONLY and ACK vectors of shared/notes/rocev2.md."""
    w = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
         / IP(src="10.0.0.1", dst="10.0.0.2", id=0x1234, flags="DF", ttl=64, tos=2)
         / UDP(sport=0xC123, dport=4791, chksum=0)
         / BTH(opcode=0x0A, dqpn=0x12, psn=0x100, ackreq=1)
         / RETH(va=0x7F0000001000, rkey=0xABCDEF01, dlen=16) / Raw(bytes(range(16))))
    assert bytes(w).hex().endswith("227c6ea7"), bytes(w).hex()
    a = (Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
         / IP(src="10.0.0.2", dst="10.0.0.1", id=0x4321, flags="DF", ttl=64, tos=2)
         / UDP(sport=0xC456, dport=4791, chksum=0)
         / BTH(opcode=0x11, dqpn=0x34, psn=0x100) / AETH(syndrome=0x1F, msn=1))
    assert bytes(a).hex() == ("020000000001020000000002080045020030432140004011e3970a0000020a000001"
                              "c45612b7001c00001100ffff00000034000001001f000001cf50d345"), bytes(a).hex()


self_check()
emit("p4ce_write_only.stf", "p4ce.p4: a WRITE ONLY is scattered to both replicas with per-replica rewrites", 2, write_only())
emit("p4ce_multi_packet.stf", "p4ce.p4: a FIRST/MIDDLE/LAST WRITE is scattered packet by packet", 2, multi_packet())
emit("p4ce_gather_f2.stf", "p4ce.p4: ACK aggregation with f = 2 (NumRecv, MinCredit, forwarded ACK)", 2, gather_f2())
emit("p4ce_dup_ack.stf", "p4ce.p4: NumRecv counts replicas, not ACKs (a replica's duplicate ACK is no quorum)", 2, dup_ack())
emit("p4ce_gather_f1.stf", "p4ce.p4: ACK aggregation with f = 1 (first ACK forwarded, MinCredit across ACKs)", 1, gather_f1())
emit("p4ce_nak.stf", "p4ce.p4: NAKs and RNR NAKs go to the leader at once", 2, nak())
emit("p4ce_security.stf", "p4ce.p4: WRITEs from non-leaders, with a wrong R_key or out of bounds never reach a replica", 2, security())
emit("p4ce_two_groups.stf", "p4ce.p4: two groups over the same hosts keep their own state", 2, two_groups())
emit("p4ce_plain.stf", "p4ce.p4: non-P4CE traffic is switched on MAC, CM MADs go to the CPU port", 2, plain())
