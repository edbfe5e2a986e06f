//! The real systems Acuerdo is measured against in Figure 9, on this machine: etcd (Raft)
//! and Apache ZooKeeper (Zab), the Debian packages (`apt-get install etcd-server
//! zookeeper`). Each run starts an `n`-server cluster on loopback with its data in memory
//! (`/dev/shm` when there is one: the paper compares with in-memory deployments), drives it
//! with the YCSB-load writes of `hosts::acuerdo::ycsb` from `clients` closed-loop client
//! threads, each on its own connection, and stops the cluster (every server it started, by
//! its own process id) when done.
//!
//! - [`cluster`]: servers as child processes: start, wait, stop.
//! - [`etcd`]: an etcd cluster; puts through its v3 JSON gateway over HTTP/1.1.
//! - [`zookeeper`]: a ZooKeeper ensemble; creates and setData through [`jute`], its
//!   binary protocol.
//! - [`jute`]: the few ZooKeeper client messages the bench sends and reads.

pub mod cluster;
pub mod etcd;
pub mod jute;
pub mod zookeeper;

use std::time::Instant;

use hosts::acuerdo::ycsb::Ycsb;

use crate::acuerdo::ycsb::YcsbReport;

/// Why a baseline run failed.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The server binary is missing.
    #[error("{0} not found: install it with `apt-get install {1}`")]
    Missing(String, &'static str),
    /// A server did not start or answer.
    #[error("{0}")]
    Start(String),
    /// A client request failed.
    #[error("{0}")]
    Client(String),
    /// I/O.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

/// A client of one system: performs one write.
pub trait Writer: Send {
    /// Writes `value` under `key`.
    fn write(&mut self, key: u64, value: &[u8]) -> Result<(), BaselineError>;
}

/// Runs the writes of `w` (`ops` of them) against a cluster through `clients` writers made
/// by `connect(i)`, in parallel; the report's `system` and `nodes` are the caller's.
pub fn drive<W: Writer>(
    system: &str,
    nodes: usize,
    ops: usize,
    w: Ycsb,
    clients: usize,
    connect: impl Fn(usize) -> Result<W, BaselineError>,
) -> Result<YcsbReport, BaselineError> {
    let writes = w.ops(ops);
    let clients = clients.clamp(1, ops.max(1));
    let mut conns = (0..clients).map(&connect).collect::<Result<Vec<W>, _>>()?;
    let t0 = Instant::now();
    let results: Vec<Result<usize, BaselineError>> = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(c, conn)| {
                let mine: Vec<&(u64, Vec<u8>)> = writes.iter().skip(c).step_by(clients).collect();
                s.spawn(move || {
                    for (k, v) in &mine {
                        conn.write(*k, v)?;
                    }
                    Ok(mine.len())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BaselineError::Client("client thread panicked".into())))
            })
            .collect()
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let done: usize = results
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?
        .iter()
        .sum();
    Ok(YcsbReport {
        system: system.into(),
        nodes,
        ops: done as u64,
        wall_s,
        ops_per_sec: done as f64 / wall_s,
        how: format!("{nodes} servers on loopback, data in memory, {clients} client connections"),
        ok: done == ops,
        note: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Ycsb {
        Ycsb {
            records: 100,
            ..Ycsb::load()
        }
    }

    #[test]
    #[ignore = "needs the etcd-server package (scripts/test.sh installs it as root)"]
    fn an_etcd_cluster_takes_every_write() {
        let r = etcd::run(3, 200, small(), 4).unwrap();
        assert!(r.ok && r.ops == 200, "{r:?}");
    }

    #[test]
    #[ignore = "needs the zookeeper package (scripts/test.sh installs it as root)"]
    fn a_zookeeper_ensemble_takes_every_write() {
        let r = zookeeper::run(3, 200, small(), 4).unwrap();
        assert!(r.ok && r.ops == 200, "{r:?}");
    }
}
