//! Checkers over a 1Pipe run's logs; each returns what it found wrong.

use std::collections::{HashMap, HashSet};

use hosts::onepipe::process::Event;

use super::lab::LabRun;

/// Every receiver delivers in (timestamp, source) order, each message once: so all receivers
/// deliver their common messages in one total order, never against the timestamps.
pub fn total_order(run: &LabRun) -> Result<(), String> {
    for (r, ds) in run.delivered.iter().enumerate() {
        for w in ds.windows(2) {
            let (a, b) = ((w[0].d.ts, w[0].d.src), (w[1].d.ts, w[1].d.src));
            if a >= b {
                return Err(format!("process {r} delivered {b:?} after {a:?}"));
            }
        }
    }
    Ok(())
}

/// A message a receiver delivered was sent to it, with that timestamp.
pub fn delivered_were_sent(run: &LabRun) -> Result<(), String> {
    let sent: HashSet<(u16, u64, u16)> = run
        .sent
        .iter()
        .enumerate()
        .flat_map(|(s, v)| {
            v.iter()
                .flat_map(move |m| m.dsts.iter().map(move |&d| (s as u16, m.ts, d)))
        })
        .collect();
    for (r, ds) in run.delivered.iter().enumerate() {
        for d in ds {
            if !sent.contains(&(d.d.src, d.d.ts, r as u16)) {
                return Err(format!(
                    "process {r} delivered ({}, {}) that nobody sent it",
                    d.d.ts, d.d.src
                ));
            }
        }
    }
    Ok(())
}

/// Every message sent before `until` (true time) reached each destination or, best effort,
/// was reported to its sender by a send-fail callback; `lost` counts the reported ones.
pub fn delivered_or_reported(run: &LabRun, until: u64) -> Result<usize, String> {
    let got: HashSet<(u16, u64, u16)> = run
        .delivered
        .iter()
        .enumerate()
        .flat_map(|(r, ds)| ds.iter().map(move |d| (d.d.src, d.d.ts, r as u16)))
        .collect();
    let mut reported: HashMap<u16, HashSet<(u64, u16)>> = HashMap::new();
    for (s, evs) in run.events.iter().enumerate() {
        for e in evs {
            if let Event::SendFail { ts, dst, .. } = e {
                reported.entry(s as u16).or_default().insert((*ts, *dst));
            }
        }
    }
    let mut lost = 0;
    for (s, v) in run.sent.iter().enumerate() {
        for m in v.iter().filter(|m| m.at < until) {
            for &d in &m.dsts {
                if got.contains(&(s as u16, m.ts, d)) {
                    continue;
                }
                if reported
                    .get(&(s as u16))
                    .is_some_and(|r| r.contains(&(m.ts, d)))
                {
                    lost += 1;
                    continue;
                }
                return Err(format!(
                    "process {s}'s message {} (ts {}) to {d} neither delivered nor reported",
                    m.seq, m.ts
                ));
            }
        }
    }
    Ok(lost)
}

/// Causality: a message a process sends after it delivered another carries a larger timestamp.
pub fn causality(run: &LabRun) -> Result<(), String> {
    for (p, sent) in run.sent.iter().enumerate() {
        let ds = &run.delivered[p];
        let mut i = 0;
        let mut latest: Option<u64> = None;
        for m in sent {
            while i < ds.len() && ds[i].at <= m.at {
                latest = Some(latest.map_or(ds[i].d.ts, |l: u64| l.max(ds[i].d.ts)));
                i += 1;
            }
            if let Some(l) = latest.filter(|&l| l >= m.ts) {
                return Err(format!(
                    "process {p} sent ts {} after delivering ts {l}",
                    m.ts
                ));
            }
        }
    }
    Ok(())
}

/// Atomicity (reliable mode): each scattering sent before `until` was delivered at all of its
/// destinations or at none.
pub fn atomic(run: &LabRun, until: u64) -> Result<(), String> {
    let got: HashSet<(u16, u64, u16)> = run
        .delivered
        .iter()
        .enumerate()
        .flat_map(|(r, ds)| ds.iter().map(move |d| (d.d.src, d.d.ts, r as u16)))
        .collect();
    for (s, v) in run.sent.iter().enumerate() {
        for m in v.iter().filter(|m| m.at < until) {
            let n = m
                .dsts
                .iter()
                .filter(|&&d| got.contains(&(s as u16, m.ts, d)))
                .count();
            if n != 0 && n != m.dsts.len() {
                return Err(format!(
                    "process {s}'s scattering {} reached {n} of {} destinations",
                    m.seq,
                    m.dsts.len()
                ));
            }
        }
    }
    Ok(())
}

/// Atomicity after host `failed` crashed (reliable mode, §5): each scattering, the failed
/// host's last ones and those sent to it included, was delivered at all of its surviving
/// destinations or at none of them; and at none when it was to the failed host and never
/// reached it (its sender recalled it).
pub fn atomic_among_survivors(run: &LabRun, failed: usize) -> Result<(), String> {
    let got: HashSet<(u16, u64, u16)> = run
        .delivered
        .iter()
        .enumerate()
        .flat_map(|(r, ds)| ds.iter().map(move |d| (d.d.src, d.d.ts, r as u16)))
        .collect();
    for (s, v) in run.sent.iter().enumerate() {
        for m in v {
            let alive: Vec<u16> = m
                .dsts
                .iter()
                .copied()
                .filter(|&d| usize::from(d) != failed)
                .collect();
            let n = alive
                .iter()
                .filter(|&&d| got.contains(&(s as u16, m.ts, d)))
                .count();
            if n != 0 && n != alive.len() {
                return Err(format!(
                    "process {s}'s scattering {} reached {n} of its {} surviving destinations",
                    m.seq,
                    alive.len()
                ));
            }
            let missed = m.dsts.iter().any(|&d| usize::from(d) == failed)
                && !run.arrivals[failed].contains_key(&(s as u16, m.ts));
            if missed && n > 0 {
                return Err(format!(
                    "process {s}'s scattering {} never reached the failed process {failed} but \
                     was delivered at {n} others: not recalled",
                    m.seq
                ));
            }
        }
    }
    Ok(())
}
