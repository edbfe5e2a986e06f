//! What happened to each frame of a replay, in words: its addresses, the tables that matched,
//! where it went (its ports; how its copies were made, by a group, a mirror session or a copy
//! to the CPU, is in its path) or why it was dropped (the table and action, or the condition,
//! that dropped it), with the totals adding up.
//!
//! The frames are traced through a second switch loaded with the same program and tables and
//! fed the same frames in the same order, so its state evolves exactly as the forwarding
//! switch's did; the copies it sends out are checked against what the replay wrote.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use pipeline::switch::{InFrame, Switch};
use pipeline::trace::{Trace, TraceEvent};

use super::replay::Arrival;
use super::run::ReplayOutcome;

/// One frame's fate.
struct Fate {
    what: String,
    copies: BTreeMap<u16, usize>,
    dropped: Option<String>,
}

/// A frame in one phrase: `IPv4 10.0.1.1 -> 10.0.2.3 UDP 4000 -> 5000`, `ARP`, ...
pub fn describe(bytes: &[u8]) -> String {
    let Ok(p) = SlicedPacket::from_ethernet(bytes) else {
        return match bytes.get(12..14) {
            Some(t) => format!("ether type 0x{:02x}{:02x}", t[0], t[1]),
            None => "runt".into(),
        };
    };
    let l4 = match &p.transport {
        Some(TransportSlice::Udp(u)) => {
            format!(" UDP {} -> {}", u.source_port(), u.destination_port())
        }
        Some(TransportSlice::Tcp(t)) => {
            format!(" TCP {} -> {}", t.source_port(), t.destination_port())
        }
        Some(TransportSlice::Icmpv4(_)) => " ICMP".into(),
        Some(TransportSlice::Icmpv6(_)) => " ICMPv6".into(),
        Some(TransportSlice::Igmp(_)) => " IGMP".into(),
        None => String::new(),
    };
    match &p.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header();
            format!(
                "IPv4 {} -> {} ttl {}{l4}",
                h.source_addr(),
                h.destination_addr(),
                h.ttl()
            )
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header();
            format!("IPv6 {} -> {}{l4}", h.source_addr(), h.destination_addr())
        }
        Some(NetSlice::Arp(_)) => "ARP".into(),
        None => match bytes.get(12..14) {
            Some(t) => format!("ether type 0x{:02x}{:02x}", t[0], t[1]),
            None => "runt".into(),
        },
    }
}

/// The tables that hit and the traffic manager's decision, from a trace.
fn path_of(trace: &Trace) -> String {
    let mut parts = Vec::new();
    for ev in &trace.events {
        match ev {
            TraceEvent::Table {
                table,
                hit: true,
                action,
                ..
            } if action != "NoAction" => {
                let t = table.rsplit('.').next().unwrap_or(table);
                let a = action.rsplit('.').next().unwrap_or(action);
                parts.push(format!("{t}: {a}"));
            }
            TraceEvent::Multicast { group, replicas } => {
                parts.push(format!("group {group} ({} copies)", replicas.len()))
            }
            TraceEvent::CopyToCpu { .. } => parts.push("copy to CPU".into()),
            TraceEvent::Mirror { session, .. } => parts.push(format!("mirror {session}")),
            TraceEvent::Recirculate { .. } => parts.push("recirculated".into()),
            _ => {}
        }
    }
    parts.join(", ")
}

/// Where a frame's copies went: `-> port 1`, `-> ports 1, 2`, `-> port 3 (2 copies)`. How
/// they were made (a unicast, a group, a mirror session, a copy to the CPU) is in its path.
fn copies_text(copies: &BTreeMap<u16, usize>) -> String {
    let ports: Vec<String> = copies
        .iter()
        .map(|(p, n)| match n {
            1 => p.to_string(),
            n => format!("{p} ({n} copies)"),
        })
        .collect();
    let s = if ports.len() == 1 { "" } else { "s" };
    format!("-> port{s} {}", ports.join(", "))
}

/// Traces `arrivals` through `sw` (a fresh switch like the one that forwarded them) and tells
/// each frame's story; `run` is what the forwarding replay did (its copies per port are
/// checked against the traced ones, its undelivered capture records counted in).
pub fn tell(sw: &mut Switch, arrivals: &[Arrival], run: &ReplayOutcome) -> String {
    let tx = &run.tx;
    let mut s = String::new();
    let mut fates = Vec::new();
    for a in arrivals {
        let (outs, trace) = sw.trace(InFrame {
            port: a.port,
            bytes: &a.bytes,
            ts: a.ts,
        });
        let mut copies = BTreeMap::new();
        for o in &outs {
            *copies.entry(o.port).or_insert(0) += 1;
        }
        let path = path_of(&trace);
        let what = format!("{:<44} {path}", describe(&a.bytes));
        fates.push(Fate {
            what,
            copies,
            dropped: trace.drop_cause(),
        });
    }
    let _ = writeln!(
        s,
        "frame by frame (`pisa trace --packet N` shows one in full):"
    );
    for (n, (a, f)) in arrivals.iter().zip(&fates).enumerate() {
        let to = match (f.copies.len(), &f.dropped) {
            (0, Some(c)) => format!("dropped: {c}"),
            (0, None) => "not sent anywhere".into(),
            _ => copies_text(&f.copies),
        };
        let _ = writeln!(s, "  #{n:<3} in port {:<3} {}", a.port, f.what);
        let _ = writeln!(s, "       {to}");
    }
    let sent: usize = fates.iter().filter(|f| !f.copies.is_empty()).count();
    let dropped = fates.iter().filter(|f| f.copies.is_empty()).count();
    let copies: usize = fates.iter().map(|f| f.copies.values().sum::<usize>()).sum();
    let several = fates
        .iter()
        .filter(|f| f.copies.values().sum::<usize>() > 1)
        .count();
    let undelivered: u64 = run.port_drops.iter().map(|(_, n)| n).sum();
    if undelivered > 0 {
        let _ = writeln!(
            s,
            "{} record(s) in the captures = {} replayed + {undelivered} the switch cannot take \
             (too short, truncated or too long: see drops.log)",
            arrivals.len() as u64 + undelivered,
            arrivals.len()
        );
    }
    let _ = writeln!(
        s,
        "{} frame(s) replayed = {sent} forwarded + {dropped} dropped; the forwarded made \
         {copies} copies out ({several} frame(s) made more than one: multicast, mirror or CPU \
         copies)",
        arrivals.len()
    );
    let mut traced: BTreeMap<u16, usize> = BTreeMap::new();
    for f in &fates {
        for (p, n) in &f.copies {
            *traced.entry(*p).or_insert(0) += n;
        }
    }
    let forwarded: BTreeMap<u16, usize> = tx
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(p, n)| (*p, *n))
        .collect();
    if traced != forwarded {
        let _ = writeln!(
            s,
            "warning: the traced copies per port {traced:?} differ from the replay's {forwarded:?} \
             (a bug: please report it)"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports in order, a port that got two copies (a packet and its mirror) says so; nothing
    /// is called flooded, which only the path (a group) can tell.
    #[test]
    fn copies_name_their_ports_and_counts() {
        let c = |v: &[(u16, usize)]| copies_text(&v.iter().copied().collect());
        assert_eq!(c(&[(1, 1)]), "-> port 1");
        assert_eq!(c(&[(2, 1), (1, 1)]), "-> ports 1, 2");
        assert_eq!(c(&[(3, 2)]), "-> port 3 (2 copies)");
    }
}
