//! Idle-timeout notifications: a thread that reads, for every table with idle timeouts, each
//! entry's TTL and last hit from the switch (the latest over its pipes and instances) and
//! tells the primary controller, in one IdleTimeoutNotification per scan, about entries not
//! hit for their TTL. An entry is told once per idle period: again only after a later hit
//! and another TTL without one. Entries stay in the table; removing them is the
//! controller's choice, as the specification leaves it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use std::collections::HashSet;

use pipeline::api::PipeSel;
use pipeline::ir::KeyMatch;

use super::super::device;
use super::super::proto::p4::v1 as p4v1;
use super::stream::primary_tx;
use super::{Shared, CALL_TIMEOUT};

/// How often idle entries are looked for (the precision of the notifications).
const IDLE_POLL: Duration = Duration::from_millis(20);

/// An entry: its table id, key and priority.
pub(super) type EntryId = (u32, Vec<(String, KeyMatch)>, Option<u32>);

/// Scans for idle entries until the server stops.
pub(super) fn idle_pump(s: &Shared) {
    while !s.stop.load(Ordering::Acquire) {
        std::thread::sleep(IDLE_POLL);
        let Ok(pipeline) = s.pipeline.read().map(|p| p.clone()) else {
            return;
        };
        let tables: Vec<(u32, String)> = pipeline
            .schema
            .tables
            .values()
            .filter(|t| t.idle)
            .map(|t| (t.id, t.name.clone()))
            .collect();
        if tables.is_empty() {
            continue;
        }
        let names: Vec<String> = tables.iter().map(|t| t.1.clone()).collect();
        let Ok(per_instance) = s.handle.each(CALL_TIMEOUT, move |sw, _| {
            names
                .iter()
                .map(|n| sw.table_idle(PipeSel::All, n).unwrap_or_default())
                .collect::<Vec<_>>()
        }) else {
            continue;
        };
        let now = s.clock.now().0;
        let mut entries = Vec::new();
        let Ok(mut told) = s.idle_told.lock() else {
            return;
        };
        let mut seen: HashSet<EntryId> = HashSet::new();
        for (k, (id, _)) in tables.iter().enumerate() {
            // The latest hit over the instances (each stamps only the pipes it runs).
            let mut merged: HashMap<EntryId, pipeline::api::idle::IdleEntry> = HashMap::new();
            for inst in &per_instance {
                for e in inst.get(k).into_iter().flatten() {
                    let eid = (*id, e.entry.keys.clone(), e.entry.priority);
                    let m = merged.entry(eid).or_insert_with(|| e.clone());
                    m.last_hit = m.last_hit.max(e.last_hit);
                }
            }
            let t = &pipeline.schema.tables[id];
            for (eid, e) in merged {
                seen.insert(eid.clone());
                let idle = now.saturating_sub(e.last_hit) >= e.ttl_ns;
                if !idle || told.get(&eid) == Some(&e.last_hit) {
                    continue;
                }
                let Ok(mut te) = device::table_entity(&pipeline.schema, t, &e.entry) else {
                    continue;
                };
                te.idle_timeout_ns = e.ttl_ns as i64;
                told.insert(eid, e.last_hit);
                entries.push(te);
            }
        }
        // Entries deleted (or no longer ageing) are forgotten.
        told.retain(|eid, _| seen.contains(eid));
        drop(told);
        if entries.is_empty() {
            continue;
        }
        let Some(tx) = primary_tx(s) else { continue };
        let note = p4v1::IdleTimeoutNotification {
            table_entry: entries,
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64),
        };
        let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
            update: Some(p4v1::stream_message_response::Update::IdleTimeoutNotification(note)),
        }));
    }
}
