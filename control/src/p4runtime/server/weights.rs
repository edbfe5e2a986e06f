//! Member weights of action selector groups (spec, "Action Profile Groups": a member of
//! weight `w` is selected `w` times as often as one of weight 1). pisa's groups hold each
//! member once, so a member of weight `w` is held with `w - 1` replicas: members the server
//! makes with the member's action (the replication a switch uses for weighted groups), in
//! the group next to it. The server keeps the replicas of each group, changes them with their
//! member (a MODIFY of the member), takes back the ones a group no longer needs, hides them
//! from reads, and gives the group back as written. Ids from [`FIRST_REPLICA`] up are the
//! server's in a profile that has weighted groups.

use std::collections::{BTreeMap, HashMap};

use super::super::codec::P4Error;
use super::super::device::Op;
use super::super::proto::p4::v1 as p4v1;
use super::super::schema::Schema;

use p4v1::entity::Entity as E;
use p4v1::update::Type as U;

/// Ids the server gives replicas start here, above the ones clients pick and the one-shot
/// members' (`oneshot`).
pub(super) const FIRST_REPLICA: u32 = 0xC000_0000;

/// The replicas of one group: per member of weight above 1, its replica ids; and the group
/// as written.
#[derive(Debug, Clone)]
pub(super) struct Weighted {
    pub replicas: Vec<(u32, Vec<u32>)>,
    pub written: p4v1::ActionProfileGroup,
}

/// What an applied weighted write changes in the server's books.
#[derive(Debug, Clone)]
pub(super) enum Change {
    Set((u32, u32), Weighted),
    Forget((u32, u32)),
}

/// Weighted groups, by (profile id, group id), and the next replica id per profile.
#[derive(Debug, Default, Clone)]
pub(super) struct Weights {
    groups: BTreeMap<(u32, u32), Weighted>,
    next: HashMap<u32, u32>,
}

/// A group's members in the switch: each member then its replicas.
pub(super) fn expanded(members: &[u32], replicas: &[(u32, Vec<u32>)]) -> Vec<u32> {
    let mut out = Vec::new();
    for m in members {
        out.push(*m);
        if let Some((_, r)) = replicas.iter().find(|(x, _)| x == m) {
            out.extend(r);
        }
    }
    out
}

impl Weights {
    /// The replicas of member `m` of profile `p` over every group, with the group's record.
    fn replicas_of(&self, p: u32, m: u32) -> Vec<u32> {
        self.groups
            .range((p, 0)..=(p, u32::MAX))
            .flat_map(|(_, w)| w.replicas.iter().filter(|(x, _)| *x == m))
            .flat_map(|(_, r)| r.iter().copied())
            .collect()
    }

    fn take_id(&mut self, profile: u32) -> u32 {
        let n = self.next.entry(profile).or_insert(FIRST_REPLICA);
        let id = *n;
        *n = n.wrapping_add(1).max(FIRST_REPLICA);
        id
    }

    /// The switch operation of `u` when weights are its business (a group write with a member
    /// of weight above 1, a write of a group that has replicas, a MODIFY of a member that has
    /// replicas), with what it changes here; `op` is `u`'s plain operation. `None`: `op`.
    pub(super) fn plan(
        &mut self,
        s: &Schema,
        u: &p4v1::Update,
        op: &Op,
    ) -> Result<Option<(Op, Option<Change>)>, P4Error> {
        let kind = U::try_from(u.r#type).unwrap_or(U::Unspecified);
        match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(E::ActionProfileGroup(g)) => self.plan_group(s, kind, g, op),
            Some(E::ActionProfileMember(m)) if kind == U::Insert => {
                let ours = m.member_id >= FIRST_REPLICA
                    && self.groups.keys().any(|(p, _)| *p == m.action_profile_id);
                match ours {
                    true => Err(P4Error::invalid(format!(
                        "member id {:#x}: ids from {FIRST_REPLICA:#x} are the server's in a \
                         profile with weighted groups",
                        m.member_id
                    ))),
                    false => Ok(None),
                }
            }
            Some(E::ActionProfileMember(m)) if kind == U::Modify => {
                let replicas = self.replicas_of(m.action_profile_id, m.member_id);
                if replicas.is_empty() {
                    return Ok(None);
                }
                let mut ops = vec![op.clone()];
                for r in replicas {
                    if let Op::MemberSet {
                        profile,
                        action,
                        params,
                        ..
                    } = op
                    {
                        ops.push(Op::MemberSet {
                            insert: false,
                            profile: profile.clone(),
                            member: r,
                            action: action.clone(),
                            params: params.clone(),
                        });
                    }
                }
                Ok(Some((Op::Seq(ops), None)))
            }
            _ => Ok(None),
        }
    }

    fn plan_group(
        &mut self,
        s: &Schema,
        kind: U,
        g: &p4v1::ActionProfileGroup,
        op: &Op,
    ) -> Result<Option<(Op, Option<Change>)>, P4Error> {
        let key = (g.action_profile_id, g.group_id);
        let old = self.groups.get(&key).cloned();
        let weighted = g.members.iter().any(|m| m.weight > 1);
        if old.is_none() && (kind == U::Delete || !weighted) {
            return Ok(None);
        }
        let Some(profile) = s.profiles.get(&g.action_profile_id).map(|p| p.name.clone()) else {
            return Ok(None);
        };
        let old_ids: Vec<u32> = old
            .iter()
            .flat_map(|w| w.replicas.iter().flat_map(|(_, r)| r.iter().copied()))
            .collect();
        let release = |keep: &[u32]| -> Vec<(Op, Option<Op>)> {
            old_ids
                .iter()
                .filter(|r| !keep.contains(r))
                .map(|r| {
                    let del = Op::MemberDelete {
                        profile: profile.clone(),
                        member: *r,
                    };
                    (del, None)
                })
                .collect()
        };
        if kind == U::Delete {
            let mut steps = vec![(op.clone(), None)];
            steps.extend(release(&[]));
            return Ok(Some((Op::Steps(steps), Some(Change::Forget(key)))));
        }
        let Op::GroupSet { insert, group, .. } = op else {
            return Ok(None);
        };
        // Replicas: the old ones of a member first, new ones for the rest.
        let mut steps = Vec::new();
        let mut replicas = Vec::new();
        for m in g.members.iter().filter(|m| m.weight > 1) {
            let had = old
                .as_ref()
                .and_then(|w| w.replicas.iter().find(|(x, _)| *x == m.member_id))
                .map(|(_, r)| r.clone())
                .unwrap_or_default();
            let want = (m.weight - 1) as usize;
            let mut ids: Vec<u32> = had.into_iter().take(want).collect();
            while ids.len() < want {
                let r = self.take_id(g.action_profile_id);
                let copy = Op::MemberCopy {
                    profile: profile.clone(),
                    from: m.member_id,
                    to: r,
                };
                let undo = Op::MemberDelete {
                    profile: profile.clone(),
                    member: r,
                };
                steps.push((copy, Some(undo)));
                ids.push(r);
            }
            replicas.push((m.member_id, ids));
        }
        let members: Vec<u32> = g.members.iter().map(|m| m.member_id).collect();
        let set = Op::GroupSet {
            insert: *insert,
            profile: profile.clone(),
            group: *group,
            members: expanded(&members, &replicas),
        };
        steps.push((set, None));
        let keep: Vec<u32> = replicas.iter().flat_map(|(_, r)| r.clone()).collect();
        steps.extend(release(&keep));
        let change = match replicas.is_empty() {
            true => Change::Forget(key),
            false => Change::Set(
                key,
                Weighted {
                    replicas,
                    written: g.clone(),
                },
            ),
        };
        Ok(Some((Op::Steps(steps), Some(change))))
    }

    /// Books an applied change.
    pub(super) fn commit(&mut self, c: Change) {
        match c {
            Change::Set(k, w) => {
                self.groups.insert(k, w);
            }
            Change::Forget(k) => {
                self.groups.remove(&k);
            }
        }
    }

    /// The group as written, for a read of a weighted group.
    pub(super) fn written(&self, profile: u32, group: u32) -> Option<&p4v1::ActionProfileGroup> {
        self.groups.get(&(profile, group)).map(|w| &w.written)
    }

    /// Whether a read's entity is a replica (not shown).
    pub(super) fn hides(&self, e: &p4v1::Entity) -> bool {
        let Some(E::ActionProfileMember(m)) = &e.entity else {
            return false;
        };
        m.member_id >= FIRST_REPLICA
            && self
                .groups
                .range((m.action_profile_id, 0)..=(m.action_profile_id, u32::MAX))
                .any(|(_, w)| w.replicas.iter().any(|(_, r)| r.contains(&m.member_id)))
    }
}
