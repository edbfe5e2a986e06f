//! Figure 9 for Acuerdo: the replicated hash table (`hosts::acuerdo::kv`) on the in-memory
//! lab under YCSB-load (`hosts::acuerdo::ycsb`), measured in **wall-clock** time so it
//! compares with real etcd and ZooKeeper servers on the same machine: the whole lab (every
//! node, the P4 switch model, the links) runs on one thread as fast as it can, and ops/s is
//! the writes committed per wall-clock second. The virtual-time rate (what the modelled
//! network would allow) is reported beside it. Every run ends with the atomic-broadcast
//! check and a comparison of every replica's table. [`run_on`] runs the same lab on either
//! driver: in namespaces ([`crate::NetnsApps`]) every node is a thread in its namespace and the
//! lab's time is the wall clock (timers as in `super::bench`'s namespace runs).

use std::time::Instant;

use hosts::acuerdo::check;
use hosts::acuerdo::kv::KvLayout;
use hosts::acuerdo::ycsb::Ycsb;
use serde::Serialize;

use super::lab::{Lab, LabConfig, LabError};
use crate::driver::Driver;
use crate::MemLab;

/// One system's YCSB-load result (Figure 9's y value).
#[derive(Debug, Clone, Serialize)]
pub struct YcsbReport {
    /// `acuerdo`, `etcd` or `zookeeper`.
    pub system: String,
    /// Replicas.
    pub nodes: usize,
    /// Writes done.
    pub ops: u64,
    /// Wall-clock seconds they took.
    pub wall_s: f64,
    /// Writes per wall-clock second.
    pub ops_per_sec: f64,
    /// How it ran.
    pub how: String,
    /// Whether the run's checks passed (every write acknowledged; for Acuerdo the
    /// atomic-broadcast check and identical tables at every replica).
    pub ok: bool,
    /// What failed, or extra figures.
    pub note: String,
}

/// Runs `ops` writes of `w` through Acuerdo's replicated hash table on `nodes` nodes with
/// `window` writes in flight, in memory.
pub fn run(nodes: usize, ops: usize, window: usize, w: Ycsb) -> Result<YcsbReport, LabError> {
    run_on::<MemLab>(nodes, ops, window, w)
}

/// [`run`] on driver `D`.
pub fn run_on<D: Driver>(
    nodes: usize,
    ops: usize,
    window: usize,
    w: Ycsb,
) -> Result<YcsbReport, LabError> {
    let writes = w.ops(ops);
    let lay = KvLayout {
        buckets: (w.records as usize * 4).max(64),
        value_max: w.value_size.max(8),
    };
    let mut lc = LabConfig::new(nodes, w.value_size + 21, window);
    lc.kv = Some(lay);
    let limit = if D::WALL_CLOCK {
        super::bench::wall_clock_timers(&mut lc);
        5_000_000_000
    } else {
        50_000_000
    };
    let mut lab = Lab::<D>::build(lc)?;
    lab.wait_leader(limit)?;
    lab.client().writes = Some(writes);
    lab.client().on = true;
    let (t0, v0, c0) = (Instant::now(), lab.now(), lab.client().committed);
    let limit = v0 + 10_000_000_000;
    while lab.client().committed - c0 < ops as u64 {
        if lab.now() > limit {
            return Err(LabError::Config(format!(
                "{} of {ops} writes committed after 10 s of the lab's time",
                lab.client().committed - c0
            )));
        }
        let t = lab.now() + if D::WALL_CLOCK { 1_000_000 } else { 200_000 };
        lab.run_until(t)?;
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let virt_s = (lab.now() - v0) as f64 / 1e9;
    lab.client().on = false;
    let t = lab.now()
        + if D::WALL_CLOCK {
            300_000_000
        } else {
            2_000_000
        };
    lab.run_until(t)?;
    lab.finish()?;
    let sent = lab.client().sent.clone();
    let agreement = check(&lab.logs(), Some(&sent));
    let mut tables = Vec::new();
    for h in 0..nodes {
        if let Some(t) = lab.with(h, |a| a.kv_bytes().map(<[u8]>::to_vec))? {
            tables.push(t);
        }
    }
    let same = tables.len() == nodes && tables.windows(2).all(|p| p[0] == p[1]);
    let mut note = if D::WALL_CLOCK {
        format!("atomic broadcast {agreement}")
    } else {
        format!(
            "virtual time {:.0} ops/s; atomic broadcast {agreement}",
            ops as f64 / virt_s
        )
    };
    if !same {
        note.push_str("; replica tables DIFFER");
    }
    Ok(YcsbReport {
        system: "acuerdo".into(),
        nodes,
        ops: ops as u64,
        wall_s,
        ops_per_sec: ops as f64 / wall_s,
        how: if D::WALL_CLOCK {
            format!(
                "namespaces: a thread per node on AF_PACKET, the P4 switch on veths, window \
                 {window}"
            )
        } else {
            format!(
                "in-memory lab on one thread, wall clock (nodes, P4 switch model and links all \
                 simulated), window {window}"
            )
        },
        ok: agreement.ok && same,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acuerdo::lab::{Lab, LabConfig};

    #[test]
    fn ycsb_writes_reach_identical_tables_at_every_replica() {
        let w = Ycsb {
            records: 200,
            ..Ycsb::load()
        };
        let r = run(3, 300, 8, w).unwrap();
        assert!(r.ok, "{}", r.note);
        assert_eq!(r.ops, 300);
        assert!(r.ops_per_sec > 0.0);
    }

    #[test]
    fn gets_read_the_last_write_straight_from_any_replica_over_rdma() {
        use hosts::acuerdo::kv::Lookup;
        let w = Ycsb {
            records: 50,
            ..Ycsb::load()
        };
        let writes = w.ops(120);
        let mut lc = LabConfig::new(3, w.value_size + 21, 4);
        lc.kv = Some(KvLayout {
            buckets: 256,
            value_max: w.value_size,
        });
        let mut lab = Lab::new(lc).unwrap();
        lab.wait_leader(50_000_000).unwrap();
        lab.client().writes = Some(writes.clone());
        lab.client().on = true;
        let t = lab.now() + 2_000_000;
        lab.run_until(t).unwrap();
        assert_eq!(lab.client().committed, 120);
        let last: std::collections::HashMap<u64, Vec<u8>> = writes.iter().cloned().collect();
        for (i, (k, v)) in last.iter().take(10).enumerate() {
            let (from, to) = (i % 3, (i + 1) % 3);
            assert_eq!(
                lab.get(from, to, *k).unwrap(),
                Lookup::Found(v.clone()),
                "key {k}"
            );
        }
        assert_eq!(lab.get(0, 2, 123_456_789).unwrap(), Lookup::Absent);
    }
}
