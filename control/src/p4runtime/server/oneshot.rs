//! One-shot action selector programming (P4Runtime spec, "One Shot Action Selector
//! Programming"): a table entry whose action is an `ActionProfileActionSet` gets a group and
//! members that the server makes for it, so the client keeps no member or group ids. Reads of
//! the entry give the set back as written; the members and groups made for it are not shown.
//!
//! pisa's groups weigh members equally, so an action of weight `w` becomes `w` members with
//! that action (the replication a switch uses for weighted groups); the sum of the weights is
//! held to the selector's `max_group_size`. An action profile is programmed one way: while it
//! has one-shot entries, member and group writes to it are refused, and while it has members
//! or groups written by the client, one-shot entries are (INVALID_ARGUMENT).

use std::collections::HashMap;

use super::super::codec::P4Error;
use super::super::device::Op;
use super::super::proto::p4::v1 as p4v1;
use super::super::request::{table, update_op};
use super::super::schema::Schema;
use super::extras::{entry_id, EntryId};

use p4v1::entity::Entity as E;
use p4v1::table_action::Type as T;
use p4v1::update::Type as U;

/// Ids the server gives its members and groups start here, above the ones clients pick.
const FIRST_ID: u32 = 0x8000_0000;

/// Writes, each with the write that takes it back.
type Steps = Vec<(Op, Option<Op>)>;

/// The group and members made for one entry, and the set it was given.
#[derive(Debug, Clone)]
pub(super) struct Shot {
    profile: u32,
    group: u32,
    members: Vec<u32>,
    set: p4v1::ActionProfileActionSet,
}

/// What an applied one-shot update changes in the server's books.
#[derive(Debug, Clone)]
pub(super) enum Change {
    Set(EntryId, Shot),
    Forget(EntryId),
}

/// One-shot entries, and which profiles are programmed with members and groups instead.
#[derive(Debug, Default, Clone)]
pub(super) struct OneShots {
    entries: HashMap<EntryId, Shot>,
    /// Per profile id: the next id to give.
    next: HashMap<u32, u32>,
    /// Per profile id: members and groups the client wrote and has not deleted.
    explicit: HashMap<u32, i64>,
    /// Per profile id: its one-shot entries (reads ask this per entity).
    shots_of: HashMap<u32, usize>,
}

fn selector_of(s: &Schema, table_id: u32) -> Option<u32> {
    s.profiles
        .values()
        .find(|p| p.with_selector && p.tables.contains(&table_id))
        .map(|p| p.id)
}

fn update(kind: U, e: E) -> p4v1::Update {
    p4v1::Update {
        r#type: kind as i32,
        entity: Some(p4v1::Entity { entity: Some(e) }),
    }
}

impl OneShots {
    fn in_use(&self, profile: u32) -> bool {
        self.shots_of.get(&profile).is_some_and(|n| *n > 0)
    }

    fn take_id(&mut self, profile: u32) -> u32 {
        let n = self.next.entry(profile).or_insert(FIRST_ID);
        let id = *n;
        *n = n.wrapping_add(1).max(FIRST_ID);
        id
    }

    /// The switch operation of `u` and what it changes here, when `u` is one-shot business:
    /// an entry given an action set, or a write of an entry made that way. `None`: an
    /// ordinary update. Member and group writes to a profile in one-shot use are refused.
    pub(super) fn plan(
        &mut self,
        s: &Schema,
        u: &p4v1::Update,
    ) -> Result<Option<(Op, Change)>, P4Error> {
        let kind = U::try_from(u.r#type).unwrap_or(U::Unspecified);
        let e = match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(E::TableEntry(e)) if !e.is_default_action => e,
            Some(E::ActionProfileMember(p4v1::ActionProfileMember {
                action_profile_id: p,
                ..
            }))
            | Some(E::ActionProfileGroup(p4v1::ActionProfileGroup {
                action_profile_id: p,
                ..
            })) if self.in_use(*p) => {
                return Err(P4Error::invalid(format!(
                    "action profile {p:#x} has entries programmed one-shot (with action sets): \
                     its members and groups are the server's"
                )))
            }
            _ => return Ok(None),
        };
        let Some(id) = entry_id(s, e) else {
            return Ok(None);
        };
        let old = self.entries.get(&id).cloned();
        if kind == U::Delete {
            let Some(old) = old else { return Ok(None) };
            let mut steps = vec![(update_op(s, u)?, None)];
            steps.extend(release(s, &old).into_iter().map(|op| (op, None)));
            return Ok(Some((Op::Steps(steps), Change::Forget(id))));
        }
        let set = match e.action.as_ref().and_then(|a| a.r#type.as_ref()) {
            Some(T::ActionProfileActionSet(set)) => set,
            Some(_) if old.is_some() => {
                return Err(P4Error::invalid(format!(
                    "table `{}`: the entry was programmed one-shot; modify it with an action set",
                    table(s, e.table_id)?.name
                )))
            }
            _ => return Ok(None),
        };
        if kind != U::Insert && kind != U::Modify {
            return Ok(None);
        }
        let t = table(s, e.table_id)?;
        let Some(profile) = selector_of(s, t.id) else {
            return Err(P4Error::invalid(format!(
                "table `{}` has no action selector: its entries take no action set",
                t.name
            )));
        };
        if self.explicit.get(&profile).is_some_and(|n| *n > 0) {
            return Err(P4Error::invalid(format!(
                "table `{}`: its action profile holds members or groups the client wrote; \
                 one-shot action sets and explicit members cannot be mixed",
                t.name
            )));
        }
        let (mut steps, shot) = self.make(s, profile, set)?;
        let mut entry = e.clone();
        entry.action = Some(p4v1::TableAction {
            r#type: Some(T::ActionProfileGroupId(shot.group)),
        });
        steps.push((update_op(s, &update(kind, E::TableEntry(entry)))?, None));
        if let Some(old) = old.filter(|_| kind == U::Modify) {
            steps.extend(release(s, &old).into_iter().map(|op| (op, None)));
        }
        Ok(Some((Op::Steps(steps), Change::Set(id, shot))))
    }

    /// The members and group for `set` (each with its undo), checked as the spec says.
    fn make(
        &mut self,
        s: &Schema,
        profile: u32,
        set: &p4v1::ActionProfileActionSet,
    ) -> Result<(Steps, Shot), P4Error> {
        let acts = &set.action_profile_actions;
        if acts.is_empty() {
            return Err(P4Error::invalid("the action set is empty"));
        }
        let mut total: u64 = 0;
        for a in acts {
            if a.weight <= 0 {
                return Err(P4Error::invalid(format!(
                    "an action in the set has weight {}: weights are positive",
                    a.weight
                )));
            }
            if a.watch_kind.is_some() {
                return Err(P4Error::unimplemented(
                    "watch ports of one-shot action sets are not supported (a group written \
                     with members takes `watch_port`)",
                ));
            }
            total += a.weight as u64;
        }
        let max = s.profiles[&profile].max_group_size;
        if max > 0 && total > u64::from(max) {
            return Err(P4Error::invalid(format!(
                "the action set's weights sum to {total}, more than the selector's \
                 max_group_size {max}"
            )));
        }
        let mut steps = Vec::new();
        let mut members = Vec::new();
        for a in acts {
            for _ in 0..a.weight {
                let id = self.take_id(profile);
                let m = p4v1::ActionProfileMember {
                    action_profile_id: profile,
                    member_id: id,
                    action: a.action.clone(),
                };
                let undo = update_op(s, &update(U::Delete, E::ActionProfileMember(m.clone())))?;
                steps.push((
                    update_op(s, &update(U::Insert, E::ActionProfileMember(m)))?,
                    Some(undo),
                ));
                members.push(id);
            }
        }
        let group = self.take_id(profile);
        let g = p4v1::ActionProfileGroup {
            action_profile_id: profile,
            group_id: group,
            members: members
                .iter()
                .map(|&member_id| p4v1::action_profile_group::Member {
                    member_id,
                    weight: 1,
                    watch_kind: None,
                })
                .collect(),
            max_size: 0,
        };
        let undo = update_op(s, &update(U::Delete, E::ActionProfileGroup(g.clone())))?;
        steps.push((
            update_op(s, &update(U::Insert, E::ActionProfileGroup(g)))?,
            Some(undo),
        ));
        let shot = Shot {
            profile,
            group,
            members,
            set: set.clone(),
        };
        Ok((steps, shot))
    }

    /// Books what an applied plan changed.
    pub(super) fn commit(&mut self, c: Change) {
        let (old, new) = match c {
            Change::Set(id, shot) => {
                let p = shot.profile;
                (self.entries.insert(id, shot), Some(p))
            }
            Change::Forget(id) => (self.entries.remove(&id), None),
        };
        if let Some(old) = old {
            *self.shots_of.entry(old.profile).or_default() -= 1;
        }
        if let Some(p) = new {
            *self.shots_of.entry(p).or_default() += 1;
        }
    }

    /// Counts the members and groups an applied ordinary update wrote or deleted.
    pub(super) fn record(&mut self, u: &p4v1::Update) {
        let kind = U::try_from(u.r#type).unwrap_or(U::Unspecified);
        let p = match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(E::ActionProfileMember(m)) => m.action_profile_id,
            Some(E::ActionProfileGroup(g)) => g.action_profile_id,
            _ => return,
        };
        let n = self.explicit.entry(p).or_default();
        match kind {
            U::Insert => *n += 1,
            U::Delete => *n -= 1,
            _ => {}
        }
    }

    /// Puts the set back into a read entry made one-shot.
    pub(super) fn fill(&self, s: &Schema, te: &mut p4v1::TableEntry) {
        if self.entries.is_empty() {
            return;
        }
        if let Some(shot) = entry_id(s, te).and_then(|id| self.entries.get(&id)) {
            te.action = Some(p4v1::TableAction {
                r#type: Some(T::ActionProfileActionSet(shot.set.clone())),
            });
        }
    }

    /// Whether a read's entity is a member or group the server made (not shown).
    pub(super) fn hides(&self, e: &p4v1::Entity) -> bool {
        match e.entity.as_ref() {
            Some(E::ActionProfileMember(m)) => self.in_use(m.action_profile_id),
            Some(E::ActionProfileGroup(g)) => self.in_use(g.action_profile_id),
            _ => false,
        }
    }
}

/// The group and members of an entry that no longer uses them, deleted.
fn release(s: &Schema, shot: &Shot) -> Vec<Op> {
    let profile = s.profiles.get(&shot.profile).map(|p| p.name.clone());
    let profile = profile.unwrap_or_default();
    let mut ops = vec![Op::GroupDelete {
        profile: profile.clone(),
        group: shot.group,
    }];
    ops.extend(shot.members.iter().map(|&member| Op::MemberDelete {
        profile: profile.clone(),
        member,
    }));
    ops
}
