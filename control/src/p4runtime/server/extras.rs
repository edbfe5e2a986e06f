//! What the server keeps beside the switch so that reads give back what was written: the
//! opaque `metadata` and `controller_metadata` of table entries, a multicast group's
//! `metadata` and a clone session's `class_of_service` (pisa's switch model has no place for
//! them), an action profile group's `max_size` (a MODIFY must keep it) and the action sets of
//! entries programmed one-shot ([`OneShots`]). An applied update
//! records them; reads fill them in; a commit that clears the
//! switch's state clears them too.

use std::collections::{BTreeMap, HashMap};

use super::super::codec::P4Error;
use super::super::device::Keys;
use super::super::proto::p4::v1 as p4v1;
use super::super::request::{entry_key, table};
use super::super::schema::Schema;
use super::oneshot::OneShots;

use p4v1::entity::Entity as E;
use p4v1::packet_replication_engine_entry::Type as Pre;
use p4v1::update::Type as U;

/// A table entry: table id, key fields sorted by name, pisa priority.
pub(super) type EntryId = (u32, Keys, Option<u32>);

#[derive(Debug, Default, Clone)]
pub(super) struct Extras {
    /// Per entry: `metadata`, `controller_metadata`.
    entries: HashMap<EntryId, (Vec<u8>, u64)>,
    /// Per multicast group: `metadata`.
    groups: BTreeMap<u32, Vec<u8>>,
    /// Per clone session: `class_of_service`.
    cos: BTreeMap<u32, u32>,
    /// Per action profile group (profile id, group id): `max_size`.
    max_size: BTreeMap<(u32, u32), i32>,
    /// Entries programmed with action sets, and the groups and members made for them.
    pub(super) shots: OneShots,
    /// Groups with members that watch a port ([`super::watch`]).
    pub(super) watched: super::watch::Watches,
    /// Groups with weighted members and their replicas ([`super::weights`]).
    pub(super) weights: super::weights::Weights,
}

pub(super) fn entry_id(s: &Schema, e: &p4v1::TableEntry) -> Option<EntryId> {
    let t = table(s, e.table_id).ok()?;
    let (mut keys, priority) = entry_key(t, e).ok()?;
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    Some((t.id, keys, priority))
}

/// Keeps `v` under `k`, or forgets `k` when `v` is the default (nothing to give back).
fn keep<K: Ord, V: Default + PartialEq>(m: &mut BTreeMap<K, V>, k: K, v: V) {
    if v == V::default() {
        m.remove(&k);
    } else {
        m.insert(k, v);
    }
}

impl Extras {
    /// Records what update `u`, which was applied, gives to keep.
    pub(super) fn record(&mut self, s: &Schema, u: &p4v1::Update) {
        let kind = U::try_from(u.r#type).unwrap_or(U::Unspecified);
        let del = kind == U::Delete;
        match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(E::TableEntry(e)) if !e.is_default_action => {
                // A MODIFY without an action leaves the entry (and what is kept) as it is.
                if kind == U::Modify && e.action.is_none() {
                    return;
                }
                let Some(id) = entry_id(s, e) else { return };
                let v = (e.metadata.clone(), e.controller_metadata);
                if del || v == Default::default() {
                    self.entries.remove(&id);
                } else {
                    self.entries.insert(id, v);
                }
            }
            Some(E::ActionProfileGroup(g)) => {
                let v = if del { 0 } else { g.max_size };
                keep(&mut self.max_size, (g.action_profile_id, g.group_id), v);
                // A group written with watches is recorded again by the writer.
                self.watched.remove(&(g.action_profile_id, g.group_id));
            }
            Some(E::PacketReplicationEngineEntry(p)) => match &p.r#type {
                Some(Pre::MulticastGroupEntry(g)) => {
                    let v = if del { Vec::new() } else { g.metadata.clone() };
                    keep(&mut self.groups, g.multicast_group_id, v);
                }
                Some(Pre::CloneSessionEntry(c)) => {
                    let v = if del { 0 } else { c.class_of_service };
                    keep(&mut self.cos, c.session_id, v);
                }
                None => {}
            },
            _ => {}
        }
    }

    /// Fills what is kept into a read's entity.
    pub(super) fn fill(&self, s: &Schema, e: &mut p4v1::Entity) {
        match e.entity.as_mut() {
            Some(E::TableEntry(te)) if !te.is_default_action => {
                self.shots.fill(s, te);
                if self.entries.is_empty() {
                    return;
                }
                if let Some((m, c)) = entry_id(s, te).and_then(|id| self.entries.get(&id)) {
                    te.metadata = m.clone();
                    te.controller_metadata = *c;
                }
            }
            Some(E::ActionProfileGroup(g)) => {
                // Every member as written, with its watched port, whatever the switch holds.
                let key = (g.action_profile_id, g.group_id);
                if let Some(w) = self.watched.get(&key) {
                    g.members = w.written.members.clone();
                } else if let Some(w) = self.weights.written(key.0, key.1) {
                    g.members = w.members.clone();
                }
                g.max_size = self
                    .max_size
                    .get(&(g.action_profile_id, g.group_id))
                    .copied()
                    .unwrap_or(0);
            }
            Some(E::PacketReplicationEngineEntry(p)) => match p.r#type.as_mut() {
                Some(Pre::MulticastGroupEntry(g)) => {
                    if let Some(m) = self.groups.get(&g.multicast_group_id) {
                        g.metadata = m.clone();
                    }
                }
                Some(Pre::CloneSessionEntry(c)) => {
                    if let Some(v) = self.cos.get(&c.session_id) {
                        c.class_of_service = *v;
                    }
                }
                None => {}
            },
            _ => {}
        }
    }

    /// A MODIFY of a group keeps the `max_size` it was inserted with (INVALID_ARGUMENT), and
    /// its members fit in it (RESOURCE_EXHAUSTED).
    pub(super) fn check(&self, u: &p4v1::Update) -> Result<(), P4Error> {
        let Some(E::ActionProfileGroup(g)) = u.entity.as_ref().and_then(|e| e.entity.as_ref())
        else {
            return Ok(());
        };
        if U::try_from(u.r#type) != Ok(U::Modify) {
            return Ok(());
        }
        let had = self
            .max_size
            .get(&(g.action_profile_id, g.group_id))
            .copied()
            .unwrap_or(0);
        if g.max_size != had {
            return Err(P4Error::invalid(format!(
                "group {}: max_size {} differs from the {had} it was inserted with; it cannot change",
                g.group_id, g.max_size
            )));
        }
        Ok(())
    }

    /// Forgets everything (the switch's state was cleared).
    pub(super) fn clear(&mut self) {
        *self = Extras::default();
    }
}
