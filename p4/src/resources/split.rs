//! Tables larger than one stage's memories, spread over several stages as bf-p4c does: the
//! entries are divided into parts, each part a logical table in its own stage with its share
//! of the SRAM / TCAM blocks (and its own hash ways and crossbar bytes, since every part looks
//! up the same key); the last part is where the table's result and actions live, so what
//! depends on the table waits for the last part.

use super::demand::{Demand, StageUse};
use super::profile::Profile;

/// The pre-classifier TCAM blocks of an ALPM that part `i` holds: they fill the earliest parts,
/// a stage's worth each. bf-p4c makes the pre-classifier a ternary table of its own
/// (midend/alpm.cpp `SplitAlpm`, `partitions x subtrees` entries), which it spreads over
/// stages like any ternary table too large for one, ahead of the ATCAM it feeds.
fn pre_classifier_share(tcam: u32, i: u32, p: &Profile) -> u32 {
    let per = p.tcam_blocks.max(1);
    tcam.saturating_sub(i.saturating_mul(per)).min(per)
}

/// The parts of a table's demand `d` when it does not fit a stage by memory alone, earliest
/// first (the last carries the table's stateful objects and pin); `None` when it fits whole,
/// or when something other than its memories is too big (splitting the entries cannot help).
pub(crate) fn split(d: &Demand, p: &Profile) -> Option<Vec<Demand>> {
    d.table?;
    let mut alone = StageUse::default();
    alone.add(d, usize::MAX);
    let r = alone.over(p)?;
    // An ATCAM's logical tables spread over the parts with its entries.
    let atcam = d.sram_per_logical > 0;
    if r != "SRAM blocks" && r != "TCAM blocks" && !(atcam && r == "logical tables") {
        return None;
    }
    // What the last part needs besides the entries: its stateful objects' memories.
    let state_sram: u32 = d.stateful.iter().map(|(_, s)| *s).sum();
    let sram_room = p.sram_blocks.checked_sub(state_sram).filter(|r| *r > 0)?;
    let by_sram = d.sram.div_ceil(sram_room);
    let by_tcam = d.tcam.div_ceil(p.tcam_blocks.max(1));
    let by_logical = if atcam {
        d.logical.div_ceil(p.logical_tables.max(1))
    } else {
        1
    };
    let parts = by_sram.max(by_tcam).max(by_logical).max(2);
    if parts as usize > super::schedule::STAGE_CAP {
        return None;
    }
    let share = |total: u32, i: u32| total / parts + u32::from(i < total % parts);
    let out: Vec<Demand> = (0..parts)
        .map(|i| {
            let last = i + 1 == parts;
            Demand {
                table: if last { d.table } else { None },
                sram: share(d.sram, i),
                logical: if atcam {
                    share(d.logical, i).max(1)
                } else {
                    d.logical
                },
                tcam: if d.tcam_first {
                    pre_classifier_share(d.tcam, i, p)
                } else {
                    share(d.tcam, i)
                },
                tcam_first: d.tcam_first && pre_classifier_share(d.tcam, i, p) > 0,
                stateful: if last { d.stateful.clone() } else { Vec::new() },
                ..d.clone()
            }
        })
        .collect();
    // Each part must fit an empty stage, or splitting does not help.
    out.iter()
        .all(|part| {
            let mut s = StageUse::default();
            s.add(part, usize::MAX);
            s.over(p).is_none()
        })
        .then_some(out)
}
