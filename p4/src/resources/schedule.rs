//! Greedy list scheduling of one gress's units into MAU stages.
//!
//! Units are taken as bf-p4c's table placement takes tables (mau/table_placement.cpp
//! `is_better`): of those whose dependencies are placed, the one that can start in the earliest
//! stage, then one whose `@stage` asks for that stage (the lower stage asked first), then one
//! whose `@placement_priority("...")` names the other, then the higher `@placement_priority(n)`,
//! then the one with the longest dependency chain below it, then program order. A table with
//! `@stage(n)` starts no earlier than stage `n` ([`super::pins`]). Each goes into the earliest
//! stage its dependencies allow where the stage still has room for it. A table short of SRAM
//! only takes what a stage has left and goes on in the next one (a part per stage, its result
//! in the last), as bf-p4c splits a table whose entries do not all fit a stage. A stateful object (register, meter, counter) lives in
//! one stage, so every unit that uses it must land there: when a later unit needs the object in
//! a later stage than where it was first placed, the earlier users are pushed down (their
//! minimum stage is raised) and placement starts over. Minimum stages only grow, so this ends;
//! when a user of an object depends on another user of it, no stage can hold both and the
//! conflict is reported instead.

use std::collections::{BTreeMap, VecDeque};

use super::demand::{Demand, StageUse, Stateful};
use super::profile::Profile;
use super::units::Unit;

/// Placement never goes past this many stages (stage numbers must fit the IR's `u8`).
pub(crate) const STAGE_CAP: usize = 255;

/// Why a unit sits in its stage (for the dependency chain of "needs N stages").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// Nothing forced it later than stage 0.
    Free,
    /// Its `deps[i]` did.
    Dep(usize),
    /// A stateful object it uses lives there.
    Pinned(Stateful),
    /// Earlier stages from `from` on had no room: `resource` ran out.
    Full { from: usize, resource: &'static str },
    /// Pushed down so that a later user of a shared object could join it.
    Pushed,
    /// Its table's `@stage(n)` asked for this stage.
    StagePin,
}

#[derive(Debug, Clone)]
pub(crate) struct Placement {
    /// The stage of each unit (of a split table: its last part, where its result is).
    pub stage_of: Vec<usize>,
    /// Of a table split over several stages ([`super::split`]): the stage of every part,
    /// earliest first; empty for the other units.
    pub parts_of: Vec<Vec<usize>>,
    pub stages: Vec<StageUse>,
    pub why: Vec<Why>,
    pub object_stage: BTreeMap<Stateful, usize>,
}

impl Placement {
    pub fn stages_used(&self) -> usize {
        self.stage_of.iter().map(|s| s + 1).max().unwrap_or(0)
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// `second` uses `object` like `first` does, but depends on `first` through `chain`
    /// (units from `first` to `second`), so the two cannot share the object's stage.
    Conflict {
        object: Stateful,
        first: usize,
        second: usize,
        chain: Vec<usize>,
    },
    /// Placement would need more than [`STAGE_CAP`] stages.
    TooDeep { unit: usize },
    /// Moving shared objects around did not settle within [`MAX_ATTEMPTS`] passes.
    GaveUp,
}

/// Placement passes before giving up (each pass raises some unit's minimum stage).
pub(crate) const MAX_ATTEMPTS: usize = 20_000;

/// A dependency path from `from` back to `to` with at least one edge that needs a new stage.
fn strict_path(units: &[Unit], from: usize, to: usize) -> Option<Vec<usize>> {
    // States: (unit, a strict edge already taken). BFS backwards along deps.
    let n = units.len();
    let mut prev: Vec<[Option<(usize, bool)>; 2]> = vec![[None, None]; n];
    let mut seen = vec![[false; 2]; n];
    let mut q = VecDeque::new();
    seen[from][0] = true;
    q.push_back((from, false));
    while let Some((u, strict)) = q.pop_front() {
        if u == to && strict {
            let mut chain = vec![u];
            let mut cur = (u, strict);
            while let Some(pr) = prev[cur.0][usize::from(cur.1)] {
                chain.push(pr.0);
                cur = pr;
            }
            return Some(chain);
        }
        for d in &units[u].deps {
            let s2 = strict || d.gap > 0;
            if d.on < n && !seen[d.on][usize::from(s2)] {
                seen[d.on][usize::from(s2)] = true;
                prev[d.on][usize::from(s2)] = Some((u, strict));
                q.push_back((d.on, s2));
            }
        }
    }
    None
}

/// What the scheduler places: per unit its demand, whether it fits no stage even alone (already
/// reported: it goes to its earliest stage regardless of capacity), and for a table split over
/// stages the parts before its last (whose demand is the unit's).
pub(crate) struct Work<'a> {
    pub demands: &'a [Demand],
    pub oversize: &'a [bool],
    pub prefix_parts: &'a [Vec<Demand>],
    /// Per unit, its table's `@placement_priority` (0 without one).
    pub priority: &'a [i32],
    /// Per unit, the stage its table's `@stage` pins its start to.
    pub pins: &'a [Option<usize>],
    /// Per unit, the tables its table's `@placement_priority("...")` puts it before.
    pub before: &'a [Vec<pipeline::ir::TableId>],
}

impl Work<'_> {
    fn pin(&self, u: usize) -> Option<usize> {
        self.pins.get(u).copied().flatten()
    }

    /// Whether unit `a`'s `@placement_priority("...")` names `b`'s table, and not the reverse.
    fn goes_before(&self, a: usize, b: usize) -> bool {
        let names = |x: usize, y: usize| {
            self.demands[y]
                .table
                .is_some_and(|t| self.before.get(x).is_some_and(|v| v.contains(&t)))
        };
        names(a, b) && !names(b, a)
    }
}

/// `rest` less a piece split off it by [`leftover_part`].
fn take_piece(rest: &mut Demand, piece: &Demand) {
    rest.sram -= piece.sram;
    if rest.sram_per_logical > 0 {
        rest.logical = rest.logical.saturating_sub(piece.logical).max(1);
    }
    rest.tcam -= piece.tcam;
    rest.tcam_first = false;
}

/// The smallest part worth splitting a table for (RAMs); smaller leftovers stay unused.
const MIN_PART_SRAM: u32 = 4;

/// A part of table demand `d` that fills the SRAM `stage` has left, when SRAM is all the stage
/// lacks for `d` and the part (its entries only: the table's result, stateful objects and
/// TCAM stay with the last part) fits there.
fn sram_part(stage: &StageUse, d: &Demand, p: &Profile) -> Option<Demand> {
    d.table?;
    leftover_part(stage, d, p)
}

/// [`sram_part`] for any part of a table (a part before the last has no table id of its own).
fn leftover_part(stage: &StageUse, d: &Demand, p: &Profile) -> Option<Demand> {
    let state: u32 = d.stateful.iter().map(|(_, s)| *s).sum();
    let free = p.sram_blocks.saturating_sub(stage.sram);
    let entries = d.sram.saturating_sub(state);
    if free < MIN_PART_SRAM || entries <= free {
        return None;
    }
    let mut whole = stage.clone();
    whole.add(d, usize::MAX);
    if whole.over(p) != Some("SRAM blocks") {
        return None;
    }
    // An ATCAM's part holds whole logical tables (one id each); other tables' parts one id.
    let logical = match d.sram_per_logical {
        0 => d.logical,
        per => free.div_ceil(per).min(d.logical.saturating_sub(1)).max(1),
    };
    let part = Demand {
        table: None,
        logical,
        sram: free,
        // An ALPM's pre-classifier TCAM goes with the first part (it picks the partition the
        // ATCAM parts search); any other TCAM stays with the table's result.
        tcam: if d.tcam_first { d.tcam } else { 0 },
        stateful: Vec::new(),
        ..d.clone()
    };
    stage.refuse(&part, p).is_none().then_some(part)
}

/// Places every unit.
pub(crate) fn schedule(units: &[Unit], w: &Work<'_>, p: &Profile) -> Result<Placement, Failure> {
    let n = units.len();
    let mut min_stage: Vec<usize> = (0..n).map(|u| w.pin(u).unwrap_or(0)).collect();
    for _ in 0..MAX_ATTEMPTS {
        if let Some(done) = attempt(units, w, p, &mut min_stage)? {
            return Ok(done);
        }
    }
    Err(Failure::GaveUp)
}

fn objects(d: &Demand) -> impl Iterator<Item = Stateful> + '_ {
    d.stateful.iter().map(|(s, _)| *s)
}

/// The state of one placement pass.
struct Pass {
    stages: Vec<StageUse>,
    stage_of: Vec<Option<usize>>,
    parts_of: Vec<Vec<usize>>,
    why: Vec<Why>,
    /// object → (stage, units using it so far)
    holders: BTreeMap<Stateful, (usize, Vec<usize>)>,
    /// Split tables → the unit that placed their parts before the last.
    split_first: BTreeMap<pipeline::ir::TableId, usize>,
    /// On Tofino 1, the stages a table split over several holds: (first part, last part, unit).
    spans: Vec<(usize, usize, usize)>,
}

/// Why a stage is closed to a unit by [`held`].
pub(crate) const HELD: &str = "held by a split table";
/// Some of the stages were [`HELD`], the others out of a resource.
pub(crate) const HELD_OR_FULL: &str = "held by a split table, or full";

/// Whether stage `s` is closed to unit `v`: on Tofino 1, once a table is split over stages,
/// bf-p4c starts no other table that is not mutually exclusive with it until its last part is
/// placed, since only the next-table chain advances through the split (no long branches;
/// mau/table_placement.cpp `can_place_with_partly_placed`). So a unit placed after the split
/// table's first part cannot use the stages from that part up to (not including) its last.
fn held(spans: &[(usize, usize, usize)], units: &[Unit], w: &Work<'_>, s: usize, v: usize) -> bool {
    spans.iter().any(|&(a, b, u)| {
        a <= s
            && s < b
            && u != v
            && (w.demands[u].table.is_none() || w.demands[u].table != w.demands[v].table)
            && !super::units::exclusive(&units[u], &units[v])
    })
}

impl Pass {
    /// The earliest stage `u`'s dependencies (all placed), minimum stage and `@stage` pin
    /// allow, and why.
    fn earliest(
        &self,
        units: &[Unit],
        u: usize,
        min_stage: usize,
        pin: Option<usize>,
    ) -> (usize, Why) {
        let mut earliest = min_stage;
        let mut reason = match earliest {
            e if pin == Some(e) => Why::StagePin,
            0 => Why::Free,
            _ => Why::Pushed,
        };
        for (i, d) in units[u].deps.iter().enumerate() {
            if let Some(s) = self.stage_of.get(d.on).copied().flatten() {
                let e = s + usize::from(d.gap);
                if e > earliest {
                    earliest = e;
                    reason = Why::Dep(i);
                }
            }
        }
        (earliest, reason)
    }

    /// The stage where placing `u` now would start (its first part, or the unit itself):
    /// bf-p4c's table placement compares candidates by this stage first
    /// (mau/table_placement.cpp `is_better`, `CALC_STAGE`).
    fn start_stage(
        &self,
        units: &[Unit],
        w: &Work<'_>,
        p: &Profile,
        u: usize,
        min: usize,
    ) -> usize {
        let d = &w.demands[u];
        let (mut s, _) = self.earliest(units, u, min, w.pin(u));
        if let Some(f) = d.table.and_then(|t| self.split_first.get(&t).copied()) {
            let n = self.parts_of[f].len().saturating_sub(1);
            return self.parts_of[f][..n].last().map_or(s, |l| s.max(l + 1));
        }
        let pinned = objects(d)
            .filter_map(|o| self.holders.get(&o).map(|(st, _)| *st))
            .max();
        if let Some(pin) = pinned {
            return s.max(pin);
        }
        if w.oversize[u] {
            return s;
        }
        let first = w.prefix_parts.get(u).and_then(|v| v.first());
        let piece = first.unwrap_or(d);
        while s < self.stages.len() && s < STAGE_CAP {
            let st = &self.stages[s];
            let room = !held(&self.spans, units, w, s, u)
                && (st.refuse(piece, p).is_none()
                    || if first.is_some() {
                        leftover_part(st, piece, p).is_some()
                    } else {
                        sram_part(st, piece, p).is_some()
                    });
            if room {
                break;
            }
            s += 1;
        }
        s
    }
}

/// Longest chain of stage-adding dependencies from each unit to the end of the gress (bf-p4c
/// prefers, among tables that can start in one stage, the one with the longest dependency
/// chain below it: mau/table_placement.cpp `is_better`, `DOWNWARD_PROP_DSC` / `LOCAL_DS`).
fn chain_below(units: &[Unit]) -> Vec<usize> {
    let mut below = vec![0usize; units.len()];
    for v in (0..units.len()).rev() {
        for d in &units[v].deps {
            if d.on < v {
                below[d.on] = below[d.on].max(below[v] + usize::from(d.gap));
            }
        }
    }
    below
}

/// bf-p4c's `PROV_STAGE` rank of unit `u` starting in `start`: 0 when its `@stage` asks for
/// that stage, else 1 (a table whose pin is already behind it has none left to honour).
fn provided(w: &Work<'_>, start: usize, u: usize) -> usize {
    match w.pin(u) {
        Some(s) if s == start => 0,
        _ => 1,
    }
}

/// One pass; `Ok(None)` means minimum stages were raised and the caller should try again.
///
/// Units are placed one at a time, as bf-p4c's table placement picks them: of the units whose
/// dependencies are all placed, the one that can start in the earliest stage, and among those
/// the higher `@placement_priority`, then the longest dependency chain below it, then program
/// order.
fn attempt(
    units: &[Unit],
    w: &Work<'_>,
    p: &Profile,
    min_stage: &mut [usize],
) -> Result<Option<Placement>, Failure> {
    let n = units.len();
    let mut pass = Pass {
        stages: Vec::new(),
        stage_of: vec![None; n],
        parts_of: vec![Vec::new(); n],
        why: vec![Why::Free; n],
        holders: BTreeMap::new(),
        split_first: BTreeMap::new(),
        spans: Vec::new(),
    };
    let below = chain_below(units);
    // Dependencies not yet placed, and who waits on each unit.
    let mut waiting: Vec<usize> = vec![0; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (v, unit) in units.iter().enumerate() {
        for d in &unit.deps {
            if d.on < n && d.on != v {
                waiting[v] += 1;
                dependents[d.on].push(v);
            }
        }
    }
    // Candidates keyed by (start stage, `@stage` asking for it first, higher priority, longer
    // chain, program order); a start stage only grows as stages fill, so a popped key is
    // checked again and re-queued if stale. A candidate of the same start and `@stage` rank
    // whose `@placement_priority("...")` names the popped one goes first instead.
    let mut queue = std::collections::BinaryHeap::new();
    let key_at = |start: usize, u: usize| {
        std::cmp::Reverse((
            start,
            provided(w, start, u),
            std::cmp::Reverse(w.priority.get(u).copied().unwrap_or(0)),
            std::cmp::Reverse(below[u]),
            u,
        ))
    };
    for u in (0..n).filter(|&u| waiting[u] == 0) {
        queue.push(key_at(pass.start_stage(units, w, p, u, min_stage[u]), u));
    }
    while let Some(std::cmp::Reverse((start, prov, _, _, u))) = queue.pop() {
        let now = pass.start_stage(units, w, p, u, min_stage[u]);
        if now > start {
            queue.push(key_at(now, u));
            continue;
        }
        let named_first = (!w.before.iter().all(Vec::is_empty))
            .then(|| {
                queue
                    .iter()
                    .find_map(|&std::cmp::Reverse((s, pv, _, _, v))| {
                        (s == start
                            && pv == prov
                            && w.goes_before(v, u)
                            && pass.start_stage(units, w, p, v, min_stage[v]) == start)
                            .then_some(v)
                    })
            })
            .flatten();
        let u = match named_first {
            Some(v) => {
                queue.retain(|&std::cmp::Reverse((_, _, _, _, x))| x != v);
                queue.push(key_at(start, u));
                v
            }
            None => u,
        };
        if place_unit(units, w, p, min_stage, &mut pass, u)?.is_none() {
            return Ok(None);
        }
        for &v in &dependents[u] {
            waiting[v] -= 1;
            if waiting[v] == 0 {
                queue.push(key_at(pass.start_stage(units, w, p, v, min_stage[v]), v));
            }
        }
    }
    // Dependencies only point back in program order, so every unit was reached; should one
    // not have been (a cycle), it is placed in program order rather than left out.
    for u in 0..n {
        if pass.stage_of[u].is_none() && place_unit(units, w, p, min_stage, &mut pass, u)?.is_none()
        {
            return Ok(None);
        }
    }
    let Pass {
        mut stages,
        stage_of,
        parts_of,
        why,
        holders,
        ..
    } = pass;
    let stage_of: Vec<usize> = stage_of.into_iter().map(|s| s.unwrap_or(0)).collect();
    let used = stage_of.iter().map(|s| s + 1).max().unwrap_or(0);
    stages.truncate(used);
    Ok(Some(Placement {
        stage_of,
        parts_of,
        stages,
        why,
        object_stage: holders.into_iter().map(|(o, (s, _))| (o, s)).collect(),
    }))
}

/// Places unit `u` (its dependencies placed); `Ok(None)` when minimum stages were raised and
/// the pass must start over.
fn place_unit(
    units: &[Unit],
    w: &Work<'_>,
    p: &Profile,
    min_stage: &mut [usize],
    pass: &mut Pass,
    u: usize,
) -> Result<Option<()>, Failure> {
    let (demands, oversize) = (w.demands, w.oversize);
    let (mut earliest, mut reason) = pass.earliest(units, u, min_stage[u], w.pin(u));
    let Pass {
        stages,
        stage_of,
        parts_of,
        why,
        holders,
        split_first,
        spans,
    } = pass;
    let closed = |spans: &[(usize, usize, usize)], s: usize| held(spans, units, w, s, u);
    // The parts of a split table before its last, each in the first stage after the
    // previous one with room; the last part (the unit) comes after them. A table applied
    // at several places has its parts placed once, by its first apply: a later apply is
    // its last part only (pinned to the first's stage, as the table is one object).
    let shared = demands[u].table.and_then(|t| split_first.get(&t).copied());
    if let Some(f) = shared {
        let n = parts_of[f].len().saturating_sub(1);
        parts_of[u] = parts_of[f][..n].to_vec();
        if let Some(&s) = parts_of[u].last() {
            earliest = earliest.max(s + 1);
        }
    }
    let own_parts = if shared.is_some() {
        None
    } else {
        w.prefix_parts.get(u)
    };
    if let (Some(t), Some(parts)) = (demands[u].table, own_parts) {
        if !parts.is_empty() {
            split_first.insert(t, u);
        }
    }
    for part in own_parts.into_iter().flatten() {
        let mut part = part.clone();
        let mut s = earliest;
        loop {
            if s >= STAGE_CAP {
                return Err(Failure::TooDeep { unit: u });
            }
            if s >= stages.len() {
                stages.resize_with(s + 1, StageUse::default);
            }
            let shut = closed(spans, s);
            if !shut && stages[s].refuse(&part, p).is_none() {
                break;
            }
            // Short of SRAM only: this part too takes what the stage has left and goes
            // on in the next stage (bf-p4c's `need_more`), as the last part does below.
            let piece = (!shut)
                .then(|| leftover_part(&stages[s], &part, p))
                .flatten();
            if let Some(piece) = piece {
                take_piece(&mut part, &piece);
                stages[s].add(&piece, u);
                parts_of[u].push(s);
            }
            s += 1;
        }
        stages[s].add(&part, u);
        parts_of[u].push(s);
        earliest = s + 1;
    }
    // What is left to place of the unit (less the SRAM of parts taken on the way).
    let mut rest = demands[u].clone();
    let held: Vec<(Stateful, usize)> = objects(&demands[u])
        .filter_map(|o| holders.get(&o).map(|(s, _)| (o, *s)))
        .collect();
    let stage = if let Some(&(pin_obj, pinned)) = held.iter().max_by_key(|(_, s)| *s) {
        let target = earliest.max(pinned);
        let mut moved = false;
        for (o, s) in &held {
            if *s < target {
                for &h in &holders[o].1 {
                    if let Some(chain) = strict_path(units, u, h) {
                        // `chain` runs from `h` (the first user) to `u`.
                        return Err(Failure::Conflict {
                            object: *o,
                            first: h,
                            second: u,
                            chain,
                        });
                    }
                    min_stage[h] = min_stage[h].max(target);
                }
                moved = true;
            }
        }
        if moved {
            return Ok(None);
        }
        if target >= STAGE_CAP {
            return Err(Failure::TooDeep { unit: u });
        }
        if target >= stages.len() {
            stages.resize_with(target + 1, StageUse::default);
        }
        if !oversize[u]
            && (closed(spans, target) || stages[target].refuse(&demands[u], p).is_some())
        {
            for (o, _) in &held {
                for &h in &holders[o].1 {
                    min_stage[h] = min_stage[h].max(target + 1);
                }
            }
            min_stage[u] = min_stage[u].max(target + 1);
            return Ok(None);
        }
        if target > earliest {
            reason = Why::Pinned(pin_obj);
        }
        target
    } else {
        let mut s = earliest;
        let mut full: Option<&'static str> = None;
        loop {
            if s >= STAGE_CAP {
                return Err(Failure::TooDeep { unit: u });
            }
            if s >= stages.len() {
                stages.resize_with(s + 1, StageUse::default);
            }
            if oversize[u] {
                break;
            }
            let shut = closed(spans, s);
            let refused = if shut {
                Some(HELD)
            } else {
                stages[s].refuse(&rest, p)
            };
            match refused {
                None => break,
                Some(r) => {
                    // Short of SRAM only: the table takes what the stage has left and
                    // goes on in the next stage (bf-p4c's `need_more` split).
                    let part = (!shut).then(|| sram_part(&stages[s], &rest, p)).flatten();
                    if let Some(part) = part {
                        take_piece(&mut rest, &part);
                        stages[s].add(&part, u);
                        parts_of[u].push(s);
                    } else if parts_of[u].is_empty() {
                        // Stages held by a split table and stages out of a resource: say both.
                        full = match full {
                            Some(f) if f != r && (f == HELD || r == HELD) => Some(HELD_OR_FULL),
                            Some(f) => Some(f),
                            None => Some(r),
                        };
                    }
                    s += 1;
                }
            }
        }
        if let Some(resource) = full {
            reason = Why::Full {
                from: earliest,
                resource,
            };
        }
        s
    };
    if let (Some(t), false) = (rest.table, parts_of[u].is_empty()) {
        split_first.entry(t).or_insert(u);
    }
    stages[stage].add(&rest, u);
    stage_of[u] = Some(stage);
    if !parts_of[u].is_empty() {
        parts_of[u].push(stage);
        if p.target == pipeline::ir::Target::Tofino1 {
            spans.push((parts_of[u][0], stage, u));
        }
    }
    why[u] = reason;
    for o in objects(&demands[u]) {
        holders.entry(o).or_insert((stage, Vec::new())).1.push(u);
    }
    Ok(Some(()))
}
