//! §7.3.1 of the 1Pipe paper in shape: a transactional key-value store on the fat tree, every
//! process a client and a shard, write-only transactions of a few keys out of a small key space
//! (contention). Over 1Pipe a transaction is one scattering, applied by each shard in delivery
//! order; as in the paper, write-only (and read-write) transactions use *reliable* 1Pipe (the
//! 2PC commit barrier, one more RTT), so a transaction is applied at all of its shards or at
//! none; read-only ones would use best effort (this workload has none). The baseline takes
//! locks shard by shard ([`hosts::onepipe::kv::LockNode`]). Both are checked serializable from
//! the shards' apply orders, and 1Pipe all-or-nothing ([`all_or_nothing`]).

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;

use dataplane::Nanos;
use etherparse::{PacketBuilder, SlicedPacket, TransportSlice};
use hosts::onepipe::kv::{parse_writes, txn_keys, LockNode, UDP_PORT};
use hosts::onepipe::process::ProcessId;

use super::lab::{fabric, members, LabConfig, LabError};
use crate::driver::Driver;
use crate::host::HostApp;
use crate::mem::MemLab;

/// Transactions a lock client keeps open at a time.
pub const LOCK_WINDOW: usize = 4;

/// One run's figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KvPoint {
    pub scheme: &'static str,
    pub processes: usize,
    pub keys_per_txn: usize,
    pub key_space: u64,
    /// Transactions committed per second per process over the run's second half.
    pub txns_per_s_per_process: f64,
    pub latency_p50_us: f64,
    pub checks_passed: bool,
    pub check_error: Option<String>,
}

/// A transaction: its client and number.
pub type Txn = (ProcessId, u64);

/// The shards' apply orders (each transaction with the keys it wrote there) admit one serial
/// order: the graph of "wrote a key right before" has no cycle, and no shard applied a
/// transaction twice (conflict serializability; writes to different keys commute).
pub fn serializable(applied: &[Vec<(Txn, Vec<u64>)>]) -> Result<(), String> {
    let mut next: HashMap<Txn, Vec<Txn>> = HashMap::new();
    let mut indegree: HashMap<Txn, usize> = HashMap::new();
    for (s, order) in applied.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        let mut last_writer: HashMap<u64, Txn> = HashMap::new();
        for (t, keys) in order {
            if !seen.insert(*t) {
                return Err(format!("shard {s} applied transaction {t:?} twice"));
            }
            indegree.entry(*t).or_default();
            for k in keys {
                if let Some(p) = last_writer.insert(*k, *t) {
                    next.entry(p).or_default().push(*t);
                    *indegree.entry(*t).or_default() += 1;
                }
            }
        }
    }
    let mut ready: VecDeque<_> = indegree
        .iter()
        .filter(|(_, &d)| d == 0)
        .map(|(&t, _)| t)
        .collect();
    let mut done = 0;
    while let Some(t) = ready.pop_front() {
        done += 1;
        for &u in next.get(&t).into_iter().flatten() {
            let d = indegree.get_mut(&u).expect("counted");
            *d -= 1;
            if *d == 0 {
                ready.push_back(u);
            }
        }
    }
    if done == indegree.len() {
        Ok(())
    } else {
        Err(format!(
            "the shards applied {} transactions in orders with a cycle",
            indegree.len() - done
        ))
    }
}

/// Transactions per second per process committed in the second half, and the median latency.
fn figures(n: usize, commits: &[(u64, u64)], duration_ns: u64) -> (f64, f64) {
    let half = duration_ns / 2;
    let count = commits.iter().filter(|(_, at)| *at >= half).count();
    let mut lat: Vec<u64> = commits.iter().map(|(s, at)| at - s).collect();
    lat.sort_unstable();
    let p50 = lat.get(lat.len() / 2).map_or(0.0, |&v| v as f64 / 1e3);
    let window = (duration_ns - half).max(1) as f64 / 1e9;
    (count as f64 / window / n.max(1) as f64, p50)
}

/// The shards a transaction touches, and its keys at each.
fn shards_of(
    client: ProcessId,
    seq: u64,
    keys: usize,
    space: u64,
    members: &[ProcessId],
) -> Vec<(ProcessId, Vec<u64>)> {
    let ks = txn_keys(client, seq, keys, space);
    hosts::onepipe::kv::txn_scattering(seq, &ks, members)
        .into_iter()
        .map(|(d, b)| (d, parse_writes(&b).map(|(_, k)| k).unwrap_or_default()))
        .collect()
}

/// Failure atomicity of the store: every transaction of `txns` (client, number, when it was
/// first applied) applied before `until` was applied at all of its shards, each with exactly
/// its keys there (`applied`: per shard, the transactions in apply order with the keys
/// written); `want` gives a transaction's shards and keys. Later ones may still be on their
/// way to their other shards when the run ends.
pub fn all_or_nothing(
    txns: &[(Txn, u64)],
    applied: &[Vec<(Txn, Vec<u64>)>],
    want: impl Fn(Txn) -> Vec<(ProcessId, Vec<u64>)>,
    until: u64,
) -> Result<(), String> {
    let mut at: HashMap<Txn, Vec<(ProcessId, &Vec<u64>)>> = HashMap::new();
    for (shard, order) in applied.iter().enumerate() {
        for (t, keys) in order {
            at.entry(*t).or_default().push((shard as ProcessId, keys));
        }
    }
    for &(t, when) in txns.iter().filter(|(_, w)| *w < until) {
        let Some(got) = at.get(&t) else { continue };
        let want = want(t);
        for (shard, keys) in &want {
            match got.iter().find(|(s, _)| s == shard) {
                None => {
                    return Err(format!(
                        "transaction {t:?} (first applied at {when} ns) applied at {} of its {} shards: \
                         not at shard {shard}",
                        got.len(),
                        want.len()
                    ))
                }
                Some((_, k)) if k != &keys => {
                    return Err(format!(
                        "transaction {t:?}: shard {shard} wrote keys {k:?}, not {keys:?}"
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// 1Pipe: a transaction commits when its last shard delivered it; reliable 1Pipe as the paper
/// runs write-only transactions, or (`reliable` false) best effort, only to show what the
/// checker catches.
pub(crate) fn one_pipe(
    cfg: &LabConfig,
    keys: usize,
    space: u64,
    reliable: bool,
) -> Result<KvPoint, LabError> {
    let mut c = cfg.clone();
    c.kv = Some((keys, space));
    c.reliable = reliable;
    let r = super::lab::run(&c)?;
    // Per transaction: when its first and last shard applied it, and how many did.
    let mut last: HashMap<(ProcessId, u64), (u64, u64, usize)> = HashMap::new();
    let mut applied = Vec::new();
    let mut bad = None;
    for ds in &r.delivered {
        let mut order = Vec::new();
        for d in ds {
            match parse_writes(&d.d.msg) {
                Ok((id, keys)) => {
                    order.push(((d.d.src, id), keys));
                    let t = last.entry((d.d.src, id)).or_insert((d.at, d.at, 0));
                    *t = (t.0.min(d.at), t.1.max(d.at), t.2 + 1);
                }
                Err(e) => bad = Some(e.to_string()),
            }
        }
        applied.push(order);
    }
    let mut commits = Vec::new();
    for (src, ss) in r.sent.iter().enumerate() {
        for s in ss {
            match last.get(&(src as ProcessId, s.seq)) {
                Some(&(_, at, got)) if got == s.dsts.len() => commits.push((s.at, at)),
                _ => {}
            }
        }
    }
    let firsts: Vec<(Txn, u64)> = last.iter().map(|(&t, &(first, ..))| (t, first)).collect();
    let n = members(r.names.len(), cfg.processes).len();
    let ids: Vec<ProcessId> = members(r.names.len(), cfg.processes)
        .into_iter()
        .map(|h| h as ProcessId)
        .collect();
    // A transaction first applied in the last ten beacon intervals (the paper's failure
    // timeout) may still be on its way to its other shards.
    let until = cfg.duration_ns.saturating_sub(cfg.beacon_interval_ns * 10);
    let want = |(client, seq): Txn| shards_of(client, seq, keys, space, &ids);
    let checks = match bad {
        Some(e) => Err(e),
        None => super::check::total_order(&r)
            .and_then(|_| serializable(&applied))
            .and_then(|_| all_or_nothing(&firsts, &applied, want, until)),
    };
    let (tput, p50) = figures(n, &commits, cfg.duration_ns);
    let scheme = if reliable {
        "1Pipe/R (WO)"
    } else {
        "1Pipe/BE (WO)"
    };
    Ok(point(scheme, n, keys, space, tput, p50, checks))
}

fn point(
    scheme: &'static str,
    n: usize,
    keys: usize,
    space: u64,
    tput: f64,
    p50: f64,
    checks: Result<(), String>,
) -> KvPoint {
    KvPoint {
        scheme,
        processes: n,
        keys_per_txn: keys,
        key_space: space,
        txns_per_s_per_process: tput,
        latency_p50_us: p50,
        checks_passed: checks.is_ok(),
        check_error: checks.err(),
    }
}

/// A lock-baseline process on a host: starts transactions whenever its window allows.
struct LockHost {
    node: LockNode,
    mac: [u8; 6],
    ip: Ipv4Addr,
    gw_mac: [u8; 6],
    ips: Vec<Ipv4Addr>,
    by_ip: HashMap<Ipv4Addr, ProcessId>,
    keys: usize,
    space: u64,
    start: u64,
    seq: u64,
    messages: u64,
    ignored: u64,
}

impl HostApp for LockHost {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        let Ok(p) = SlicedPacket::from_ethernet(frame) else {
            self.ignored += 1;
            return;
        };
        let (Some(etherparse::NetSlice::Ipv4(ip)), Some(TransportSlice::Udp(udp))) =
            (&p.net, &p.transport)
        else {
            self.ignored += 1;
            return;
        };
        let src = self.by_ip.get(&ip.header().source_addr()).copied();
        match src {
            Some(src) if udp.destination_port() == UDP_PORT => {
                if self.node.on_packet(now.0, src, udp.payload()).is_err() {
                    self.ignored += 1;
                }
            }
            _ => self.ignored += 1,
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        if now.0 >= self.start {
            while self.node.can_start() && self.seq < self.messages {
                let me = self.node.id();
                let ks = txn_keys(me, self.seq, self.keys, self.space);
                let id = u64::from(me) << 40 | self.seq;
                self.node.start(now.0, id, &ks);
                self.seq += 1;
            }
        }
        while let Some(o) = self.node.poll_transmit() {
            let b = PacketBuilder::ethernet2(self.mac, self.gw_mac)
                .ipv4(self.ip.octets(), self.ips[usize::from(o.dst)].octets(), 64)
                .udp(UDP_PORT, UDP_PORT);
            let mut f = Vec::with_capacity(b.size(o.bytes.len()));
            b.write(&mut f, &o.bytes).expect("a Vec grows");
            out(f);
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        (self.seq == 0).then_some(Nanos(self.start))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The lock baseline on the fabric of `cfg`, on driver `D`.
fn locking_on<D: Driver>(cfg: &LabConfig, keys: usize, space: u64) -> Result<KvPoint, LabError> {
    let (mut lab, topo, _agents) = fabric::<D>(cfg)?;
    let hosts = members(topo.hosts.len(), cfg.processes);
    let ids: Vec<ProcessId> = hosts.iter().map(|&h| h as ProcessId).collect();
    let ips: Vec<Ipv4Addr> = topo.hosts.iter().map(|h| h.ip).collect();
    let by_ip = ips
        .iter()
        .enumerate()
        .map(|(i, &a)| (a, i as ProcessId))
        .collect::<HashMap<_, _>>();
    for &h in &hosts {
        let (s, _) = topo
            .host_attachment(h)
            .ok_or_else(|| LabError::Config(format!("host {h} is not cabled")))?;
        let app = LockHost {
            node: LockNode::new(h as ProcessId, ids.clone(), LOCK_WINDOW),
            mac: topo.hosts[h].mac,
            ip: topo.hosts[h].ip,
            gw_mac: topo.switches[s].mac,
            ips: ips.clone(),
            by_ip: by_ip.clone(),
            keys,
            space,
            start: 50_000 + h as u64 * 100,
            seq: 0,
            messages: u64::MAX,
            ignored: 0,
        };
        lab.attach(h, Box::new(app))?;
    }
    lab.run_to(Nanos(cfg.duration_ns))?;
    lab.finish()?;
    let (mut applied, mut commits) = (Vec::new(), Vec::new());
    for &h in &hosts {
        lab.with_app(h, |a: &mut LockHost| {
            applied.push(
                a.node
                    .applied
                    .iter()
                    .map(|(id, keys)| {
                        (
                            ((id >> 40) as ProcessId, id & ((1 << 40) - 1)),
                            keys.clone(),
                        )
                    })
                    .collect::<Vec<_>>(),
            );
            commits.extend(a.node.committed.iter().map(|&(_, s, at)| (s, at)));
        })
        .ok_or_else(|| LabError::Config(format!("host {h} runs no lock node")))?;
    }
    let (tput, p50) = figures(hosts.len(), &commits, cfg.duration_ns);
    Ok(point(
        "2PL locks",
        hosts.len(),
        keys,
        space,
        tput,
        p50,
        serializable(&applied),
    ))
}

/// 1Pipe (write-only transactions on reliable 1Pipe, §7.3.1) and the lock baseline, `keys`
/// keys per transaction out of `space`, with the processes, links and duration of `cfg`; 1Pipe
/// offers transactions every `cfg.send_every_ns` per process.
pub fn kv(cfg: &LabConfig, keys: usize, space: u64) -> Result<Vec<KvPoint>, LabError> {
    let mut c = cfg.clone();
    c.messages = u64::MAX;
    Ok(vec![
        one_pipe(&c, keys, space, true)?,
        locking_on::<MemLab>(&c, keys, space)?,
    ])
}
