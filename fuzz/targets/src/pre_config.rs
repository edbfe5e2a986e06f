//! Fuzz target: arbitrary bytes as `$pre.*` / `$mirror.cfg` requests and replication requests
//! on `pipeline::tm`; nothing may panic and every replica must go to a valid dev port.

use pipeline::ir::Gress;
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession, MirrorSessions};
use pipeline::tm::pre::{Pre, ReplicationRequest, MAX_DEV_PORT};

fn one(data: &[u8]) -> Option<()> {
    let mut it = data
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]));
    let mut next = || it.next();
    let mut pre = Pre::new();
    let mut mirror = MirrorSessions::new(1..=1023);
    let mut out = Vec::new();
    loop {
        let op = next()?;
        let a = next()?;
        let b = next()?;
        let n = usize::from(next()? % 8);
        let mut ports = Vec::new();
        for _ in 0..n {
            ports.push(next()? % 600);
        }
        let lags: Vec<u8> = ports.iter().map(|p| (*p % 260) as u8).collect();
        match op % 12 {
            0 => drop(pre.group_create(a)),
            1 => drop(pre.group_destroy(a)),
            2 => drop(pre.group_add_node(a, u32::from(b), (n % 2 == 1).then_some(b))),
            3 => drop(pre.group_remove_node(a, u32::from(b))),
            4 => drop(pre.node_create(u32::from(a), b, &ports, &lags)),
            5 => drop(pre.node_update(u32::from(a), b, &ports, &lags)),
            6 => drop(pre.node_destroy(u32::from(a))),
            7 => drop(pre.prune_set(a, &ports)),
            8 => drop(pre.lag_set(a as u8, &ports)),
            9 => {
                let s = MirrorSession {
                    direction: MirrorDirection::Both,
                    dest: if b & 1 == 0 {
                        MirrorDest::Port(b)
                    } else {
                        MirrorDest::Multicast {
                            mcast_grp_a: Some(b),
                            mcast_grp_b: None,
                            level1_exclusion_id: a,
                            level2_exclusion_id: a,
                            rid: b,
                            level1_mcast_hash: a,
                            level2_mcast_hash: b,
                        }
                    },
                    max_len: Some(a),
                    enabled: true,
                };
                let _ = mirror.configure(a % 1100, s);
                let _ = mirror.active(a % 1100, Gress::Egress);
            }
            10 => drop(mirror.delete(a % 1100)),
            _ => {
                out.clear();
                let req = ReplicationRequest {
                    mcast_grp_a: Some(a),
                    mcast_grp_b: (n > 3).then_some(b),
                    level1_exclusion_id: b,
                    level2_exclusion_id: a % 512,
                    rid: b,
                    level1_mcast_hash: a,
                    level2_mcast_hash: b % 8192,
                };
                pre.replicate(&req, &mut out);
                assert!(out.iter().all(|r| r.port <= MAX_DEV_PORT));
            }
        }
    }
}

/// One input.
pub fn run(data: &[u8]) {
    let _ = one(data);
}
