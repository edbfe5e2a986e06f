//! TCAM-style index for tables with ternary or range keys (or several LPM keys): rows sorted
//! by match priority, first matching row wins.
//!
//! Priority direction follows BfRt's `$MATCH_PRIORITY` (Tofino's TCAM convention): a
//! **numerically lower priority wins**; entries of equal priority are ordered by insertion (the
//! older entry wins), which is also what the `const entries` order gives when the lowering
//! numbers them 0, 1, 2, ... An LPM field in such a table is a prefix mask with no implied
//! preference for longer prefixes, as on the hardware and in BMv2.

use crate::ir::{KeyMatch, Value};

use super::key::{width_mask, FieldTest};

#[derive(Debug, Clone)]
struct Row {
    priority: u32,
    seq: u64,
    handle: u32,
    tests: Box<[FieldTest]>,
}

#[derive(Debug, Clone)]
pub struct TcamIndex {
    masks: Box<[Value]>,
    widths: Box<[u16]>,
    rows: Vec<Row>,
}

impl TcamIndex {
    pub fn new(widths: &[u16]) -> TcamIndex {
        TcamIndex {
            masks: widths.iter().map(|w| width_mask(*w)).collect(),
            widths: widths.into(),
            rows: Vec::new(),
        }
    }

    pub fn insert(&mut self, keys: &[KeyMatch], priority: u32, seq: u64, handle: u32) {
        let tests = keys
            .iter()
            .zip(self.widths.iter())
            .map(|(m, w)| FieldTest::from_match(m, *w))
            .collect();
        let at = self
            .rows
            .partition_point(|r| (r.priority, r.seq) < (priority, seq));
        self.rows.insert(
            at,
            Row {
                priority,
                seq,
                handle,
                tests,
            },
        );
    }

    pub fn remove(&mut self, priority: u32, seq: u64) {
        let at = self
            .rows
            .partition_point(|r| (r.priority, r.seq) < (priority, seq));
        if self
            .rows
            .get(at)
            .is_some_and(|r| r.priority == priority && r.seq == seq)
        {
            self.rows.remove(at);
        }
    }

    pub fn clear(&mut self) {
        self.rows.clear();
    }

    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<u32> {
        if key.len() != self.masks.len() {
            return None;
        }
        self.rows
            .iter()
            .find(|r| {
                r.tests
                    .iter()
                    .zip(key.iter().zip(self.masks.iter()))
                    .all(|(t, (k, m))| t.matches(k & m))
            })
            .map(|r| r.handle)
    }
}
