//! Idle timeouts of tables declared with `idle_timeout = true`: an entry's TTL set (0:
//! never ages), and every entry's TTL and last hit read back, so that a control plane with
//! a clock can tell which entries went idle (P4Runtime's idle-timeout notifications, bf-rt's
//! `$ENTRY_TTL`). A new entry starts with no TTL and its insertion as its last hit.

use super::tables::TableEntry;
use super::{ApiError, PipeSel};
use crate::ir::KeyMatch;
use crate::switch::Switch;

/// An entry of a table with idle timeouts: its TTL and its last hit (the latest over the
/// selected pipes), in ns of the switch's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleEntry {
    pub entry: TableEntry,
    pub ttl_ns: u64,
    pub last_hit: u64,
}

impl Switch {
    /// Whether `table` has idle timeouts.
    pub fn table_idle_timeout(&self, table: &str) -> Result<bool, ApiError> {
        let r = self.table_ref(table)?;
        Ok(self.ir_table(r).idle_timeout)
    }

    fn idle_table(&self, table: &str) -> Result<super::tables::TableRef, ApiError> {
        let r = self.table_ref(table)?;
        if !self.ir_table(r).idle_timeout {
            return Err(ApiError::NoIdleTimeout {
                table: self.ir_table(r).name.clone(),
            });
        }
        Ok(r)
    }

    /// Sets the TTL of the entry with this key on every selected pipe (0: never ages).
    pub fn table_entry_ttl(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        ttl_ns: u64,
    ) -> Result<(), ApiError> {
        let r = self.idle_table(table)?;
        let (_, _, km) = self.table_key(table, keys)?;
        let prog = self.prog.clone();
        let t = &prog.pipelines[r.pl].tables[r.t];
        let targets = self.target_pipes(pipes, r.pl, &t.name)?;
        let handles = targets
            .iter()
            .map(|&p| Ok((p, self.entry_handle(p, r.t, t, &km, priority)?)))
            .collect::<Result<Vec<_>, ApiError>>()?;
        for (p, h) in handles {
            if let Some(idle) = &mut self.pipes[p].tables[r.t].idle {
                idle.set_ttl(h, ttl_ns);
            }
        }
        Ok(())
    }

    /// The TTL (first selected pipe) and latest hit over the selected pipes of the entry with
    /// this key in table `r`, found by its canonical key.
    fn idle_of(
        &self,
        r: super::tables::TableRef,
        targets: &[usize],
        km: &[KeyMatch],
        priority: Option<u32>,
    ) -> Option<(u64, u64)> {
        let mut found = None;
        for &p in targets {
            let ts = &self.pipes[p].tables[r.t];
            let Some(h) = ts.table.get(km, priority).map(|x| x.0) else {
                continue;
            };
            let Some(c) = ts.idle.as_ref().and_then(|i| i.get(h)) else {
                continue;
            };
            let e = found.get_or_insert((c.ttl_ns, 0));
            e.1 = e.1.max(c.last_hit.get());
        }
        found
    }

    /// The entry with this key: its TTL and its latest hit over the selected pipes.
    pub fn table_entry_idle(
        &self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
    ) -> Result<(u64, u64), ApiError> {
        let r = self.idle_table(table)?;
        let (_, _, km) = self.table_key(table, keys)?;
        let name = &self.prog.pipelines[r.pl].tables[r.t].name;
        let targets = self.target_pipes(pipes, r.pl, name)?;
        self.idle_of(r, &targets, &km, priority)
            .ok_or_else(|| ApiError::EntryNotFound {
                table: name.clone(),
            })
    }

    /// The entries of `table` that age (TTL above 0), each with its TTL and its latest hit
    /// over the selected pipes: what a control plane scans for idle entries.
    pub fn table_idle(&self, pipes: PipeSel, table: &str) -> Result<Vec<IdleEntry>, ApiError> {
        let r = self.idle_table(table)?;
        let pl = &self.prog.pipelines[r.pl];
        let t = &pl.tables[r.t];
        let targets = self.target_pipes(pipes, r.pl, &t.name)?;
        let Some(&first) = targets.first() else {
            return Ok(Vec::new());
        };
        let ts = &self.pipes[first].tables[r.t];
        let mut out = Vec::new();
        for (h, keys, priority, call) in ts.table.iter() {
            let ages = ts
                .idle
                .as_ref()
                .and_then(|i| i.get(h))
                .is_some_and(|c| c.ttl_ns > 0);
            if !ages {
                continue;
            }
            let Some((ttl_ns, last_hit)) = self.idle_of(r, &targets, keys, priority) else {
                continue;
            };
            out.push(IdleEntry {
                entry: self.entry_view(pl, t, keys, priority, call),
                ttl_ns,
                last_hit,
            });
        }
        Ok(out)
    }
}
