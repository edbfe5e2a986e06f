//! Action profiles and selectors behind a match table: entries of such a table hold no action
//! of their own but a reference ([`MEMBER_REF`] / [`GROUP_REF`] with the id as the one action
//! argument) to a *member* (an action and its data) or a *group* of members. A hit on a group
//! picks one member by the selector's hash over the table's `selector` key fields, with the
//! selector ALU's arithmetic ([`super::selector`]) over the group's member positions.
//!
//! Positions are the driver's (`pipe_mgr_select_tbl.c`, default member order): a new group's
//! members take positions 0, 1, ... in the order given; a write of a group that exists keeps
//! the members it still lists where they are, takes out the others one by one in member order
//! (the driver's member-handle order; pisa's member ids stand for the handles), the last
//! position moving into each hole (`pipe_mgr_sel_grp_mbr_del_from_stage_word`), then appends
//! the new ones in the order given (`pipe_mgr_sel_get_mbr_diff`, `rmt_sel_grp_mbrs_set`). Up to
//! 120 members a group of several RAM words holds the same members in each (the driver
//! duplicates them), so the word does not matter; beyond 120 pisa deals the positions into
//! the words in contiguous runs (the driver's spread depends on the order of past writes: not
//! modelled, `pisa check` warns).
//!
//! A selector may have member-status bits (a `Register<bit<1>>` given to the `ActionSelector`,
//! or made for a `SelectorAction`): a member whose bit is 0 is inactive. The bits live in that
//! register, where `SelectorAction`s write them: group slot `s` (groups take the lowest free
//! slot when created) holds its members' bits at `s * max_group_size + p` for position `p`.
//! This layout is pisa's own (the driver's is not public); a group write sets its members'
//! bits to 1.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::selector::{word_index, SelectorAlu, WORD_MEMBERS};
use crate::externs::hash::{BitWriter, Hasher};
use crate::externs::random::Random;
use crate::ir::{ActionCall, ActionId, Value};
use crate::state::RegisterState;

/// The action of an entry that points at a member: its one argument is the member id.
pub const MEMBER_REF: ActionId = ActionId(u32::MAX - 1);
/// The action of an entry that points at a group: its one argument is the group id.
pub const GROUP_REF: ActionId = ActionId(u32::MAX - 2);

/// What an entry of a profile table points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryRef {
    Member(u32),
    Group(u32),
}

impl EntryRef {
    /// The stored form of the reference.
    pub fn call(self) -> ActionCall {
        let (action, id) = match self {
            EntryRef::Member(m) => (MEMBER_REF, m),
            EntryRef::Group(g) => (GROUP_REF, g),
        };
        ActionCall {
            action,
            args: vec![Value::from(id)],
        }
    }

    /// The reference a stored action is, if it is one.
    pub fn of(call: &ActionCall) -> Option<EntryRef> {
        let id = u32::try_from(*call.args.first()?).ok()?;
        match call.action {
            MEMBER_REF => Some(EntryRef::Member(id)),
            GROUP_REF => Some(EntryRef::Group(id)),
            _ => None,
        }
    }
}

/// Why a member or group operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("the profile is full ({0} members)")]
    MembersFull(u32),
    #[error("no member {0}")]
    NoMember(u32),
    #[error("member {0} is in group {1}: take it out of the group first")]
    MemberInGroup(u32, u32),
    #[error("member {0} is used by a table entry: delete or change the entry first")]
    MemberInUse(u32),
    #[error("group {0} is used by a table entry: delete or change the entry first")]
    GroupInUse(u32),
    #[error("group {0} has no members: a table entry cannot point at an empty group (add members first)")]
    EmptyGroup(u32),
    #[error("group {0} is used by a table entry and cannot be emptied: delete or change the entry first")]
    EmptyingUsedGroup(u32),
    #[error("this profile has no selector: it holds members only, no groups")]
    NoSelector,
    #[error("the selector is full ({0} groups)")]
    GroupsFull(u32),
    #[error("no group {0}")]
    NoGroup(u32),
    #[error("a group holds at most {max} members, {got} given")]
    GroupTooBig { max: u32, got: usize },
    #[error("member {0} is given twice")]
    DuplicateMember(u32),
}

/// The hash unit of a selector (its algorithm at [`super::selector::HASH_BITS`] bits), the
/// widths of its input fields, and how its ALU picks.
#[derive(Debug, Clone)]
pub struct SelectorUnit {
    pub hasher: Hasher,
    pub alu: SelectorAlu,
    pub widths: Box<[u16]>,
    pub max_groups: u32,
    pub max_group_size: u32,
    /// The register holding the member-status bits, if the selector has them.
    pub status: Option<usize>,
}

/// The members and groups one table sees (a profile shared by several tables is kept equal in
/// each of them by the runtime API).
#[derive(Debug, Clone)]
pub struct Profile {
    max_members: u32,
    members: HashMap<u32, ActionCall, FixedState>,
    groups: HashMap<u32, Vec<u32>, FixedState>,
    /// Each group's slot in the member-status bits.
    slots: HashMap<u32, u32, FixedState>,
    /// The slots free for new groups.
    free_slots: SlotPool,
    selector: Option<SelectorUnit>,
}

/// Slots handed out smallest first, each in O(log n) whatever the number in use: the ones in
/// use are `0..high` less `holes`.
#[derive(Debug, Clone, Default)]
struct SlotPool {
    high: u32,
    holes: std::collections::BTreeSet<u32>,
}

impl SlotPool {
    fn take(&mut self) -> u32 {
        self.holes.pop_first().unwrap_or_else(|| {
            self.high += 1;
            self.high - 1
        })
    }

    fn give_back(&mut self, slot: u32) {
        if slot + 1 != self.high {
            self.holes.insert(slot);
            return;
        }
        self.high -= 1;
        while self.high > 0 && self.holes.remove(&(self.high - 1)) {
            self.high -= 1;
        }
    }
}

impl Profile {
    pub fn new(max_members: u32, selector: Option<SelectorUnit>) -> Profile {
        Profile {
            max_members,
            members: HashMap::with_hasher(FixedState::default()),
            groups: HashMap::with_hasher(FixedState::default()),
            slots: HashMap::with_hasher(FixedState::default()),
            free_slots: SlotPool::default(),
            selector,
        }
    }

    pub fn has_selector(&self) -> bool {
        self.selector.is_some()
    }

    /// Adds member `id` or replaces its action and data.
    pub fn member_set(&mut self, id: u32, call: ActionCall) -> Result<(), ProfileError> {
        if !self.members.contains_key(&id) && self.members.len() as u32 >= self.max_members {
            return Err(ProfileError::MembersFull(self.max_members));
        }
        self.members.insert(id, call);
        Ok(())
    }

    /// Removes member `id` (refused while a group holds it; the caller checks the entries).
    pub fn member_delete(&mut self, id: u32) -> Result<(), ProfileError> {
        if let Some((g, _)) = self.groups.iter().find(|(_, ms)| ms.contains(&id)) {
            return Err(ProfileError::MemberInGroup(id, *g));
        }
        self.members
            .remove(&id)
            .map(|_| ())
            .ok_or(ProfileError::NoMember(id))
    }

    /// Creates group `id` or replaces its members (which must exist, each once).
    pub fn group_set(&mut self, id: u32, members: &[u32]) -> Result<(), ProfileError> {
        let sel = self.selector.as_ref().ok_or(ProfileError::NoSelector)?;
        if members.len() > sel.max_group_size as usize {
            return Err(ProfileError::GroupTooBig {
                max: sel.max_group_size,
                got: members.len(),
            });
        }
        if !self.groups.contains_key(&id) && self.groups.len() as u32 >= sel.max_groups {
            return Err(ProfileError::GroupsFull(sel.max_groups));
        }
        for (i, m) in members.iter().enumerate() {
            if !self.members.contains_key(m) {
                return Err(ProfileError::NoMember(*m));
            }
            if members[..i].contains(m) {
                return Err(ProfileError::DuplicateMember(*m));
            }
        }
        if !self.slots.contains_key(&id) {
            // The smallest free slot, without a scan of the ones in use: creating a group costs
            // the same however many the selector holds.
            let slot = self.free_slots.take();
            self.slots.insert(id, slot);
        }
        let positions = match self.groups.remove(&id) {
            Some(old) => rewrite_positions(old, members),
            None => members.to_vec(),
        };
        self.groups.insert(id, positions);
        Ok(())
    }

    /// The register of the member-status bits, and the first bit of group `id` in it.
    pub fn status_bits(&self, id: u32) -> Option<(usize, u64)> {
        let sel = self.selector.as_ref()?;
        let slot = self.slots.get(&id)?;
        Some((
            sel.status?,
            u64::from(*slot) * u64::from(sel.max_group_size),
        ))
    }

    /// Removes group `id` (the caller checks the entries).
    pub fn group_delete(&mut self, id: u32) -> Result<(), ProfileError> {
        if let Some(slot) = self.slots.remove(&id) {
            self.free_slots.give_back(slot);
        }
        self.groups
            .remove(&id)
            .map(|_| ())
            .ok_or(ProfileError::NoGroup(id))
    }

    /// Whether a table entry may point at `r`: a member that exists, or a group that exists
    /// and has members (the driver refuses an entry on an empty group, as the SDE's
    /// `tna_action_selector` test shows).
    pub fn exists(&self, r: EntryRef) -> Result<(), ProfileError> {
        match r {
            EntryRef::Member(m) if self.members.contains_key(&m) => Ok(()),
            EntryRef::Member(m) => Err(ProfileError::NoMember(m)),
            EntryRef::Group(_) if self.selector.is_none() => Err(ProfileError::NoSelector),
            EntryRef::Group(g) => match self.groups.get(&g) {
                Some(m) if m.is_empty() => Err(ProfileError::EmptyGroup(g)),
                Some(_) => Ok(()),
                None => Err(ProfileError::NoGroup(g)),
            },
        }
    }

    /// Whether `r` (a member, or a group, empty or not) is there.
    pub fn holds(&self, r: EntryRef) -> bool {
        match r {
            EntryRef::Member(m) => self.members.contains_key(&m),
            EntryRef::Group(g) => self.groups.contains_key(&g),
        }
    }

    /// Members by id, and groups by id with their members (for reads).
    pub fn members(&self) -> impl Iterator<Item = (u32, &ActionCall)> + '_ {
        self.members.iter().map(|(k, v)| (*k, v))
    }

    pub fn groups(&self) -> impl Iterator<Item = (u32, &[u32])> + '_ {
        self.groups.iter().map(|(k, v)| (*k, v.as_slice()))
    }

    /// Packet path: the member action `r` resolves to for a packet whose selector key fields
    /// are `selector_keys` (`None`: an empty group, one with no active member, or a member
    /// since deleted); `regs` holds the member-status bits (none given: all active).
    pub fn resolve(
        &self,
        r: EntryRef,
        selector_keys: &[Value],
        regs: &[RegisterState],
    ) -> Option<&ActionCall> {
        match r {
            EntryRef::Member(m) => self.members.get(&m),
            EntryRef::Group(g) => {
                let sel = self.selector.as_ref()?;
                let members = self.groups.get(&g)?;
                let bits = self.status_bits(g).and_then(|(r, base)| {
                    let cells = regs.get(r)?.lo.get(base as usize..)?;
                    Some(&cells[..members.len().min(cells.len())])
                });
                let active = |p: usize| bits.is_none_or(|b| b.get(p).is_none_or(|v| *v & 1 == 1));
                let hash = self.select(selector_keys);
                let (start, len) = word_of(members.len(), sel.max_group_size, hash, sel);
                let pick = sel.alu.pick(hash, len, &|i| active(start + i))?;
                self.members.get(members.get(start + pick)?)
            }
        }
    }

    /// The selector's hash of the selector key fields (0 without a selector).
    fn select(&self, keys: &[Value]) -> u128 {
        let Some(sel) = &self.selector else {
            return 0;
        };
        let mut bits = BitWriter::new();
        for (v, w) in keys.iter().zip(sel.widths.iter()) {
            bits.push(*v, *w);
        }
        // A selector's hash is a function of the packet; the `Random` algorithm (which a
        // selector cannot use on Tofino) gets a fixed generator.
        let mut rng = Random::new(0);
        sel.hasher.get(&bits, &mut rng)
    }
}

/// A group's member positions after a write listing `members` (each once): the driver's
/// diff (see the module doc) applied to the positions `old`.
fn rewrite_positions(mut old: Vec<u32>, members: &[u32]) -> Vec<u32> {
    let mut gone: Vec<u32> = old
        .iter()
        .copied()
        .filter(|m| !members.contains(m))
        .collect();
    gone.sort_unstable();
    for m in gone {
        if let Some(p) = old.iter().position(|x| *x == m) {
            old.swap_remove(p);
        }
    }
    for m in members {
        if !old.contains(m) {
            old.push(*m);
        }
    }
    old
}

/// The run of positions (first, count) in the selector RAM word a packet's `hash` picks, for
/// a group of `len` members whose selector has groups of up to `max_group_size`.
fn word_of(len: usize, max_group_size: u32, hash: u128, sel: &SelectorUnit) -> (usize, usize) {
    if len <= WORD_MEMBERS {
        return (0, len);
    }
    let words = (max_group_size as usize).div_ceil(WORD_MEMBERS).max(1);
    let w = word_index(hash, words, sel.alu.scramble);
    // Contiguous runs, the first `len % words` one longer.
    let (base, extra) = (len / words, len % words);
    let start = w * base + w.min(extra);
    (start, base + usize::from(w < extra))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::HashAlgorithm;

    fn call(a: u32, v: Value) -> ActionCall {
        ActionCall {
            action: ActionId(a),
            args: vec![v],
        }
    }

    /// A FAIR selector without scrambling over an identity hash: key `k` picks the
    /// `(k mod active)`-th active position.
    fn selector(groups: u32, size: u32) -> Option<SelectorUnit> {
        Some(SelectorUnit {
            hasher: Hasher::new(HashAlgorithm::Identity, super::super::selector::HASH_BITS)
                .unwrap(),
            alu: SelectorAlu {
                mode: crate::ir::SelectorMode::Fair,
                scramble: false,
            },
            widths: vec![16].into(),
            max_groups: groups,
            max_group_size: size,
            status: None,
        })
    }

    /// A new group takes the smallest slot free (the member-status bits the driver would
    /// use), reusing those of deleted groups, lowest first.
    #[test]
    fn group_slots_are_the_smallest_free() {
        let sel = selector(8, 1).map(|s| SelectorUnit {
            status: Some(0),
            ..s
        });
        let mut p = Profile::new(8, sel);
        p.member_set(1, call(7, Value::from(1u32))).unwrap();
        let slot = |p: &Profile, g: u32| p.status_bits(g).map(|(_, b)| b);
        for g in 0..5 {
            p.group_set(g, &[1]).unwrap();
            assert_eq!(slot(&p, g), Some(u64::from(g)));
        }
        for g in [3, 1, 4] {
            p.group_delete(g).unwrap();
        }
        // In use: 0 and 2. Free: 1, then 3 (4 was the top and is gone with 3 below it).
        p.group_set(10, &[1]).unwrap();
        p.group_set(11, &[1]).unwrap();
        p.group_set(12, &[1]).unwrap();
        p.group_set(13, &[1]).unwrap();
        let got: Vec<_> = (10..14).map(|g| slot(&p, g)).collect();
        assert_eq!(got, vec![Some(1), Some(3), Some(4), Some(5)]);
    }

    #[test]
    fn members_groups_and_selection() {
        let mut p = Profile::new(4, selector(2, 3));
        for m in 1..=3 {
            p.member_set(m, call(7, Value::from(m))).unwrap();
        }
        p.group_set(10, &[1, 2, 3]).unwrap();
        // Identity hash: the key itself picks member key mod 3.
        for k in 0..9u128 {
            let got = p.resolve(EntryRef::Group(10), &[k], &[]).unwrap();
            assert_eq!(got.args[0], (k % 3) + 1);
        }
        assert_eq!(p.resolve(EntryRef::Member(2), &[], &[]).unwrap().args[0], 2);
        assert_eq!(p.member_delete(2), Err(ProfileError::MemberInGroup(2, 10)));
        assert_eq!(
            p.group_set(11, &[1, 2, 3, 1]),
            Err(ProfileError::GroupTooBig { max: 3, got: 4 })
        );
        assert_eq!(
            p.group_set(11, &[1, 1]),
            Err(ProfileError::DuplicateMember(1))
        );
        assert_eq!(p.group_set(11, &[9]), Err(ProfileError::NoMember(9)));
        p.group_set(11, &[]).unwrap();
        assert!(
            p.resolve(EntryRef::Group(11), &[5], &[]).is_none(),
            "an empty group"
        );
        assert_eq!(p.group_set(12, &[1]), Err(ProfileError::GroupsFull(2)));
        p.member_set(4, call(7, 4)).unwrap();
        assert_eq!(
            p.member_set(5, call(7, 5)),
            Err(ProfileError::MembersFull(4))
        );
        let r = EntryRef::Group(10);
        assert_eq!(EntryRef::of(&r.call()), Some(r));
        assert_eq!(EntryRef::of(&call(7, 1)), None);
    }

    /// Status bits (register 0, group slot s at s * 3): a member whose bit is 0 is skipped,
    /// the hash picking among the rest; a group with none active misses.
    #[test]
    fn inactive_members_are_skipped() {
        let mut sel = selector(2, 3);
        if let Some(s) = sel.as_mut() {
            s.status = Some(0);
        }
        let mut p = Profile::new(4, sel);
        for m in 1..=3 {
            p.member_set(m, call(7, Value::from(m))).unwrap();
        }
        p.group_set(10, &[1, 2]).unwrap();
        p.group_set(11, &[1, 2, 3]).unwrap();
        assert_eq!(p.status_bits(11), Some((0, 3)));
        let mut reg = crate::state::RegisterState {
            lo: vec![1, 1, 0, 1, 0, 1],
            hi: Vec::new(),
            log: 0,
            head: 0,
        };
        let pick = |p: &Profile, g: u32, k: u128, r: &crate::state::RegisterState| {
            p.resolve(EntryRef::Group(g), &[k], std::slice::from_ref(r))
                .map(|c| c.args[0])
        };
        // Group 11: members 1 and 3 active; k mod 2 picks among them.
        assert_eq!(pick(&p, 11, 0, &reg), Some(1));
        assert_eq!(pick(&p, 11, 1, &reg), Some(3));
        assert_eq!(pick(&p, 10, 1, &reg), Some(2));
        reg.lo[3] = 0;
        reg.lo[5] = 0;
        assert_eq!(pick(&p, 11, 0, &reg), None);
        // A deleted group's slot goes to the next group created.
        p.group_delete(10).unwrap();
        p.group_set(12, &[3]).unwrap();
        assert_eq!(p.status_bits(12), Some((0, 0)));
    }

    /// Positions as the driver keeps them (pipe_mgr_select_tbl.c `pipe_mgr_sel_get_mbr_diff`,
    /// `rmt_sel_grp_mbrs_set`, `pipe_mgr_sel_grp_mbr_del_from_stage_word`): a rewrite keeps
    /// the members still listed in place, takes out the others in member order with the last
    /// position filling each hole, and appends the new members.
    #[test]
    fn group_rewrites_keep_the_driver_positions() {
        let mut p = Profile::new(8, selector(2, 8));
        for m in 1..=6 {
            p.member_set(m, call(7, Value::from(m))).unwrap();
        }
        p.group_set(10, &[1, 2, 3, 4]).unwrap();
        // Out: 1 (position 0 <- 4 from the end), then 3 (now last, no move); in: 5, 6.
        p.group_set(10, &[5, 2, 4, 6]).unwrap();
        let positions = p.groups().find(|g| g.0 == 10).map(|g| g.1.to_vec());
        assert_eq!(positions, Some(vec![4, 2, 5, 6]));
        // The listed order of members already there does not move them.
        p.group_set(10, &[6, 5, 4, 2]).unwrap();
        let positions = p.groups().find(|g| g.0 == 10).map(|g| g.1.to_vec());
        assert_eq!(positions, Some(vec![4, 2, 5, 6]));
        // FAIR over four active positions: key k picks position k mod 4.
        let got: Vec<Value> = (0..4u128)
            .filter_map(|k| p.resolve(EntryRef::Group(10), &[k], &[]))
            .map(|c| c.args[0])
            .collect();
        assert_eq!(got, vec![4, 2, 5, 6]);
    }

    /// A group wider than one RAM word: contiguous runs of positions, one per word.
    #[test]
    fn wide_groups_split_into_words() {
        let sel = selector(1, 240);
        let Some(sel) = sel else { return };
        assert_eq!(word_of(100, 240, 0, &sel), (0, 100));
        // 121 members over 2 words: 61 then 60; hash bit 51 picks the word (2 words, no
        // shift, `(h & 0x3ff) mod 2`).
        assert_eq!(word_of(121, 240, 0, &sel), (0, 61));
        assert_eq!(word_of(121, 240, 1 << 51, &sel), (61, 60));
    }

    #[test]
    fn a_plain_profile_has_no_groups() {
        let mut p = Profile::new(4, None);
        assert_eq!(p.group_set(1, &[]), Err(ProfileError::NoSelector));
        assert_eq!(p.exists(EntryRef::Group(1)), Err(ProfileError::NoSelector));
    }
}
