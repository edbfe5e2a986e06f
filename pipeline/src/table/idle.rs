//! Idle-timeout bookkeeping of a table declared with `idle_timeout = true`: per entry its
//! TTL (0: never ages) and the time of its last hit. Lookups stamp the hit time through a
//! `Cell` (the executor holds tables shared while a packet runs; no allocation on the packet
//! path: the cells grow when the control plane inserts, never during a lookup). Whether an
//! entry is idle, and telling the controller so, is the control plane's business: it reads
//! TTLs and last hits and compares them with its clock.

use std::cell::Cell;

use super::EntryHandle;

/// One entry's TTL and last hit (ns of the switch's clock).
#[derive(Debug, Clone, Default)]
pub struct IdleCell {
    pub ttl_ns: u64,
    pub last_hit: Cell<u64>,
}

/// The idle cells of one table, indexed by entry handle.
#[derive(Debug, Clone, Default)]
pub struct IdleState {
    cells: Vec<IdleCell>,
}

impl IdleState {
    /// A new entry at `h`, inserted at `now`: no TTL yet, last hit = its insertion.
    pub fn reset(&mut self, h: EntryHandle, now: u64) {
        let i = h.index();
        if self.cells.len() <= i {
            self.cells.resize_with(i + 1, IdleCell::default);
        }
        self.cells[i] = IdleCell {
            ttl_ns: 0,
            last_hit: Cell::new(now),
        };
    }

    /// Sets entry `h`'s TTL (0: never ages).
    pub fn set_ttl(&mut self, h: EntryHandle, ttl_ns: u64) {
        if let Some(c) = self.cells.get_mut(h.index()) {
            c.ttl_ns = ttl_ns;
        }
    }

    /// A lookup hit entry `h` at `now`.
    #[inline]
    pub fn touch(&self, h: EntryHandle, now: u64) {
        if let Some(c) = self.cells.get(h.index()) {
            c.last_hit.set(c.last_hit.get().max(now));
        }
    }

    /// Entry `h`'s cell.
    pub fn get(&self, h: EntryHandle) -> Option<&IdleCell> {
        self.cells.get(h.index())
    }
}
