//! Acuerdo on in-memory links driven in real time, for Figure 9's wall-clock comparison with
//! real etcd and ZooKeeper servers: every node on its own thread with its RDMA endpoint and
//! its copy of the hash table, the switch (the topology's fabric.p4, the same pipeline the
//! in-memory lab runs) on one more thread, frames carried between them by channels, time
//! the wall clock. Each thread blocks when it has nothing to do until a frame arrives or its
//! next timer is due. Timers are scaled for OS threads sharing a few cores (heartbeat 2 ms,
//! failure timeout 200 ms). The node that leads runs the YCSB client: it keeps `window`
//! writes in flight, taking them in order from the shared list.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use dataplane::runtime::Pipeline;
use dataplane::switch::SwitchPipeline;
use dataplane::Nanos;
use hosts::acuerdo::kv::{self, KvLayout, Op, Update};
use hosts::acuerdo::node::{Node, NodeConfig, PeerInfo};
use hosts::acuerdo::ycsb::Ycsb;
use hosts::acuerdo::{check, Entry, Pid};
use hosts::p4ce::integrity::digest;

use super::lab::LabError;
use super::ycsb::YcsbReport;
use crate::host::RdmaHost;

/// What every thread shares.
struct Shared {
    t0: Instant,
    stop: AtomicBool,
    /// Stops the switch thread (after the nodes).
    stop_switch: AtomicBool,
    /// Next write to send (index into `writes`).
    next: AtomicUsize,
    /// Updates each node delivered (a write delivered anywhere is committed).
    delivered: Vec<AtomicU64>,
    /// Whether some node leads (its diff committed).
    led: AtomicBool,
    /// Whether the client may start.
    go: AtomicBool,
    writes: Vec<(u64, Vec<u8>)>,
    window: usize,
}

impl Shared {
    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }
}

/// What a node thread hands back: its log and its table.
type NodeOut = Result<(Vec<Entry>, Vec<u8>), String>;

fn node_thread(
    mut node: Node,
    rx: Receiver<Vec<u8>>,
    to_switch: Sender<(u16, Vec<u8>)>,
    port: u16,
    lay: KvLayout,
    sh: Arc<Shared>,
) -> NodeOut {
    let mut table = vec![0u8; lay.len()];
    let mut log = Vec::new();
    let mut inflight = 0usize;
    let mut epoch = None;
    while !sh.stop.load(Ordering::Relaxed) {
        let now = sh.now();
        let wait = node
            .next_wakeup()
            .map_or(1_000_000, |t| t.saturating_sub(now))
            .min(1_000_000);
        match rx.recv_timeout(Duration::from_nanos(wait)) {
            Ok(f) => {
                node.handle_frame(sh.now(), &f);
                while let Ok(f) = rx.try_recv() {
                    node.handle_frame(sh.now(), &f);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let now = sh.now();
        node.poll(now).map_err(|e| e.to_string())?;
        let leads = node.core.is_leader();
        while let Some(d) = node.poll_delivery() {
            if let Ok(u) = Update::decode(&d.payload) {
                kv::apply(&mut table, lay, &u.op);
                sh.delivered[node.core.me() as usize].fetch_add(1, Ordering::Relaxed);
                if leads && epoch == Some(node.core.epoch()) && d.hdr.e == node.core.epoch() {
                    inflight = inflight.saturating_sub(1);
                }
            }
            log.push(Entry {
                hdr: d.hdr,
                digest: digest(&d.payload),
            });
        }
        if leads && node.core.committed().e == node.core.epoch() {
            if epoch != Some(node.core.epoch()) {
                epoch = Some(node.core.epoch());
                inflight = 0;
            }
            sh.led.store(true, Ordering::Relaxed);
            while inflight < sh.window && sh.go.load(Ordering::Relaxed) {
                let i = sh.next.fetch_add(1, Ordering::Relaxed);
                let Some((k, v)) = sh.writes.get(i) else {
                    break;
                };
                let u = Update {
                    seq: i as u64,
                    op: Op::Set(*k, v.clone()),
                };
                node.broadcast(u.encode()).map_err(|e| e.to_string())?;
                inflight += 1;
            }
        }
        while let Some(f) = node.poll_transmit(sh.now()) {
            if to_switch.send((port, f)).is_err() {
                return Err("the switch thread is gone".into());
            }
        }
    }
    let st = node.endpoint().stats();
    tracing::debug!(
        node = node.core.me(),
        role = ?node.core.role(),
        epoch = ?node.core.epoch(),
        committed = %node.core.committed(),
        stats = ?node.stats(),
        retransmissions = st.retransmissions,
        timeouts = st.timeouts,
        "acuerdo node thread done"
    );
    Ok((log, table))
}

/// Runs `ops` YCSB-load writes through Acuerdo's hash table on `nodes` node threads and a
/// switch thread, in wall-clock time.
pub fn run(nodes: usize, ops: usize, window: usize, w: Ycsb) -> Result<YcsbReport, LabError> {
    let topo = super::topology(nodes)?;
    let mut switches = crate::build::switches(&topo).map_err(crate::mem::MemLabError::from)?;
    let mut pipe = SwitchPipeline {
        sw: switches.remove(0),
    };
    let lay = KvLayout {
        buckets: (w.records as usize * 4).max(64),
        value_max: w.value_size.max(8),
    };
    let sh = Arc::new(Shared {
        t0: Instant::now(),
        stop: AtomicBool::new(false),
        stop_switch: AtomicBool::new(false),
        next: AtomicUsize::new(0),
        delivered: (0..nodes).map(|_| AtomicU64::new(0)).collect(),
        led: AtomicBool::new(false),
        go: AtomicBool::new(false),
        writes: w.ops(ops),
        window,
    });
    let mut built = Vec::new();
    for h in 0..nodes {
        let mut nc = NodeConfig::new(h as Pid, nodes);
        nc.core.heartbeat_ns = 2_000_000;
        nc.core.timeout_ns = 200_000_000;
        nc.core.commit_push_ns = 0;
        nc.poll_every_ns = 250_000;
        // 16.8 ms ACK timeout: threads on a loaded machine stall for milliseconds.
        nc.ack_timeout = 12;
        built.push(Node::new(nc, RdmaHost::new(&topo, h).endpoint)?);
    }
    let infos: Vec<PeerInfo> = built.iter().map(|n| n.info()).collect();
    let (to_switch, from_nodes) = unbounded::<(u16, Vec<u8>)>();
    let mut to_node = vec![None; 512];
    let mut threads = Vec::new();
    for (h, mut node) in built.into_iter().enumerate() {
        node.connect(&infos)?;
        let port = topo
            .host_attachment(h)
            .map(|(_, p)| p)
            .ok_or_else(|| LabError::Config(format!("host {h} is cabled to no switch")))?;
        let (tx, rx) = unbounded();
        to_node[port as usize] = Some(tx);
        let (ts, sh2) = (to_switch.clone(), sh.clone());
        threads.push(std::thread::spawn(move || {
            node_thread(node, rx, ts, port, lay, sh2)
        }));
    }
    drop(to_switch);
    let sh2 = sh.clone();
    let switch = std::thread::spawn(move || {
        while !sh2.stop_switch.load(Ordering::Relaxed) {
            let Ok((port, f)) = from_nodes.recv_timeout(Duration::from_millis(1)) else {
                continue;
            };
            let now = Nanos(sh2.now());
            pipe.process(port, &f, now, &mut |o, bytes| {
                if let Some(Some(tx)) = to_node.get(o as usize) {
                    let _ = tx.send(bytes);
                }
            });
        }
    });
    // Wait for a leader, then time the writes.
    let limit = Instant::now() + Duration::from_secs(30);
    while !sh.led.load(Ordering::Relaxed) && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(1));
    }
    let t0 = Instant::now();
    sh.go.store(true, Ordering::Relaxed);
    let deadline = t0 + Duration::from_secs(60);
    let done = |sh: &Shared| {
        sh.delivered
            .iter()
            .map(|d| d.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0)
    };
    while done(&sh) < ops as u64 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let done = done(&sh);
    std::thread::sleep(Duration::from_millis(50)); // followers take the last commits
    sh.stop.store(true, Ordering::Relaxed);
    let mut logs = Vec::new();
    let mut tables = Vec::new();
    for (h, t) in threads.into_iter().enumerate() {
        let (log, table) = t
            .join()
            .map_err(|_| LabError::Node(h, "thread panicked".into()))?
            .map_err(|e| LabError::Node(h, e))?;
        logs.push((h as u32, log));
        tables.push(table);
    }
    sh.stop_switch.store(true, Ordering::Relaxed);
    let _ = switch.join();
    let agreement = check(&logs, None);
    // Every node that delivered everything holds the same table, and they are a majority (a
    // node may sit out an epoch: one that voted for a larger epoch than the winner's refuses
    // its diff, as Figure 5 says, until the next election).
    let full: Vec<&Vec<u8>> = logs
        .iter()
        .zip(&tables)
        .filter(|((_, l), _)| l.len() as u64 == agreement.longest)
        .map(|(_, t)| t)
        .collect();
    let same = full.len() > nodes / 2 && full.windows(2).all(|p| p[0] == p[1]);
    let mut note = format!("atomic broadcast {agreement}");
    if !same {
        note.push_str("; replica tables DIFFER");
    }
    Ok(YcsbReport {
        system: "acuerdo".into(),
        nodes,
        ops: done,
        wall_s,
        ops_per_sec: done as f64 / wall_s,
        how: format!(
            "a thread per node and one for the switch model, in-memory links, wall clock, window {window}"
        ),
        ok: done == ops as u64 && agreement.ok && same,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_threads_around_a_switch_thread_commit_every_write_in_real_time() {
        let w = Ycsb {
            records: 100,
            ..Ycsb::load()
        };
        let r = run(3, 300, 8, w).unwrap();
        assert!(r.ok, "{r:?}");
    }
}
