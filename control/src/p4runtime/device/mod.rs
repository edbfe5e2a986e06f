//! What a P4Runtime request does to a switch, as runtime-API calls by name: validated writes
//! ([`Op`], built from an update against the [`Schema`] by [`super::write`]) and reads
//! ([`Query`], answered with P4Runtime entities). Both run on the switch's own thread through
//! [`dataplane::switch::SwitchHandle::each`], one call per batch.
//!
//! Multicast groups are PRE groups whose L1 nodes are numbered `mgid << 16 | instance` (one
//! node per replica instance, holding that instance's ports). Clone sessions are mirror
//! sessions with one port (both directions; `packet_length_bytes` truncates). A value set entry
//! is written whole (MODIFY replaces every member, on every pipe) and read from the first pipe.
//! Writes are here, reads in [`read`].

mod read;

pub(crate) use read::{entity, entries_of, table_entity};
pub use read::{merge_counts, read, Query};

use pipeline::api::cells::Cell;
use pipeline::api::PipeSel;
use pipeline::externs::meter::MeterConfig;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;
use pipeline::table::profile::EntryRef;
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

use super::cells;
use super::codec::P4Error;

/// Keys by field name.
pub type Keys = Vec<(String, KeyMatch)>;
/// Parameters by name.
pub type Params = Vec<(String, Value)>;

/// One validated write.
#[derive(Debug, Clone)]
pub enum Op {
    /// `ttl_ns`: the entry's idle timeout, for a table that has them.
    TableInsert {
        table: String,
        keys: Keys,
        priority: Option<u32>,
        action: String,
        params: Params,
        ttl_ns: Option<u64>,
    },
    TableModify {
        table: String,
        keys: Keys,
        priority: Option<u32>,
        action: String,
        params: Params,
        ttl_ns: Option<u64>,
    },
    TableDelete {
        table: String,
        keys: Keys,
        priority: Option<u32>,
    },
    /// A MODIFY without an action: the entry must exist; only its idle timeout changes.
    TableTouch {
        table: String,
        keys: Keys,
        priority: Option<u32>,
        ttl_ns: Option<u64>,
    },
    /// The default entry back to the program's default action.
    DefaultReset {
        table: String,
    },
    /// Writes applied in order (an entry, then its direct counter and meter).
    Seq(Vec<Op>),
    /// Writes applied in order, each with the write that takes it back: when one fails, those
    /// before it are taken back, last first (one-shot entries: members, group, entry, then
    /// the replaced group and members, which take nothing back).
    Steps(Vec<(Op, Option<Op>)>),
    DefaultSet {
        table: String,
        action: String,
        params: Params,
    },
    RegisterWrite {
        name: String,
        index: u32,
        lo: Value,
        hi: Option<Value>,
    },
    McInsert {
        mgid: u16,
        replicas: Vec<(u16, u16)>,
    },
    McModify {
        mgid: u16,
        replicas: Vec<(u16, u16)>,
    },
    McDelete {
        mgid: u16,
    },
    CloneSet {
        insert: bool,
        id: u16,
        port: u16,
        max_len: Option<u16>,
    },
    CloneDelete {
        id: u16,
    },
    /// An entry pointing at an action profile member or group (insert or modify).
    TableRef {
        insert: bool,
        table: String,
        keys: Keys,
        priority: Option<u32>,
        to: EntryRef,
    },
    MemberSet {
        insert: bool,
        profile: String,
        member: u32,
        action: String,
        params: Params,
    },
    MemberDelete {
        profile: String,
        member: u32,
    },
    GroupSet {
        insert: bool,
        profile: String,
        group: u32,
        members: Vec<u32>,
    },
    /// A new member `to` with the action and data of member `from` (a weighted group's
    /// replica).
    MemberCopy {
        profile: String,
        from: u32,
        to: u32,
    },
    GroupDelete {
        profile: String,
        group: u32,
    },
    /// Cells `indexes` of an indexed meter configured (`None`: back to unconfigured).
    MeterSet {
        name: String,
        indexes: std::ops::Range<u32>,
        cfg: Option<MeterConfig>,
    },
    /// Cells `indexes` of an indexed counter set.
    CounterWrite {
        name: String,
        indexes: std::ops::Range<u32>,
        packets: u64,
        bytes: u64,
    },
    /// The direct counter of one entry set.
    DirectCounterWrite {
        table: String,
        keys: Keys,
        priority: Option<u32>,
        packets: u64,
        bytes: u64,
    },
    /// The direct counter cell of a table's default entry set.
    DefaultCounterWrite {
        table: String,
        packets: u64,
        bytes: u64,
    },
    /// A parser value set's members replaced (per member, a value and mask per field).
    ValueSetReplace {
        set: String,
        members: Vec<Vec<(Value, Value)>>,
    },
    /// The direct meter of one entry configured (`None`: back to unconfigured).
    DirectMeterSet {
        table: String,
        keys: Keys,
        priority: Option<u32>,
        cfg: Option<MeterConfig>,
    },
}

pub(super) fn refs(v: &[(String, KeyMatch)]) -> Vec<(&str, KeyMatch)> {
    v.iter().map(|(n, k)| (n.as_str(), *k)).collect()
}

fn prefs(v: &[(String, Value)]) -> Vec<(&str, Value)> {
    v.iter().map(|(n, k)| (n.as_str(), *k)).collect()
}

fn node_id(mgid: u16, rid: u16) -> u32 {
    u32::from(mgid) << 16 | u32::from(rid)
}

fn mc_create(sw: &mut Switch, mgid: u16, replicas: &[(u16, u16)]) -> Result<(), P4Error> {
    let mut by_rid: std::collections::BTreeMap<u16, Vec<u16>> = Default::default();
    for (port, rid) in replicas {
        by_rid.entry(*rid).or_default().push(*port);
    }
    sw.mc_group_create(mgid)?;
    for (rid, ports) in by_rid {
        let node = node_id(mgid, rid);
        sw.mc_node_create(node, rid, &ports, &[])?;
        sw.mc_group_add_node(mgid, node, None)?;
    }
    Ok(())
}

fn mc_destroy(sw: &mut Switch, mgid: u16) -> Result<(), P4Error> {
    let nodes: Vec<u32> = sw
        .pre()
        .group_get(mgid)
        .ok_or_else(|| P4Error::not_found(format!("multicast group {mgid} does not exist")))?
        .iter()
        .map(|m| m.node)
        .collect();
    for n in nodes {
        sw.mc_group_remove_node(mgid, n)?;
        sw.mc_node_destroy(n)?;
    }
    sw.mc_group_destroy(mgid)?;
    Ok(())
}

/// Gives an entry of a table with idle timeouts its TTL (`None`: the table has none).
fn set_ttl(
    sw: &mut Switch,
    table: &str,
    keys: &Keys,
    priority: Option<u32>,
    ttl_ns: Option<u64>,
) -> Result<(), P4Error> {
    if let Some(ttl) = ttl_ns {
        sw.table_entry_ttl(PipeSel::All, table, &refs(keys), priority, ttl)?;
    }
    Ok(())
}

fn apply_steps(sw: &mut Switch, steps: &[(Op, Option<Op>)]) -> Result<(), P4Error> {
    for (i, (op, _)) in steps.iter().enumerate() {
        if let Err(e) = apply(sw, op) {
            for undo in steps[..i].iter().rev().filter_map(|(_, u)| u.as_ref()) {
                if let Err(u) = apply(sw, undo) {
                    tracing::warn!(error = %u, "taking back a failed write's step");
                }
            }
            return Err(e);
        }
    }
    Ok(())
}

/// [`Op::MemberCopy`]: refused when `to` exists or `from` does not.
fn member_copy(sw: &mut Switch, profile: &str, from: u32, to: u32) -> Result<(), P4Error> {
    let all = PipeSel::All;
    if sw.profile_holds(all, profile, EntryRef::Member(to))? {
        return Err(P4Error::new(
            tonic::Code::AlreadyExists,
            format!("action profile `{profile}`: member {to:#x} exists"),
        ));
    }
    let view = sw.profile_read(all, profile)?;
    let (_, action, params) = view.members.iter().find(|m| m.0 == from).ok_or_else(|| {
        P4Error::not_found(format!("action profile `{profile}`: no member {from}"))
    })?;
    Ok(sw.profile_member_set(all, profile, to, action, &prefs(params))?)
}

/// Applies one write.
pub fn apply(sw: &mut Switch, op: &Op) -> Result<(), P4Error> {
    let all = PipeSel::All;
    match op {
        Op::TableInsert {
            table,
            keys,
            priority,
            action,
            params,
            ttl_ns,
        } => {
            sw.table_add(all, table, &refs(keys), *priority, action, &prefs(params))?;
            set_ttl(sw, table, keys, *priority, *ttl_ns)
        }
        Op::TableModify {
            table,
            keys,
            priority,
            action,
            params,
            ttl_ns,
        } => {
            sw.table_modify(all, table, &refs(keys), *priority, action, &prefs(params))?;
            set_ttl(sw, table, keys, *priority, *ttl_ns)
        }
        Op::TableDelete {
            table,
            keys,
            priority,
        } => Ok(sw.table_delete(all, table, &refs(keys), *priority)?),
        Op::TableTouch {
            table,
            keys,
            priority,
            ttl_ns,
        } => {
            sw.table_get(all, table, &refs(keys), *priority)?;
            set_ttl(sw, table, keys, *priority, *ttl_ns)
        }
        Op::DefaultReset { table } => Ok(sw.table_reset_default(all, table)?),
        Op::Seq(ops) => ops.iter().try_for_each(|op| apply(sw, op)),
        Op::Steps(steps) => apply_steps(sw, steps),
        Op::DefaultSet {
            table,
            action,
            params,
        } => Ok(sw.table_set_default(all, table, action, &prefs(params))?),
        Op::RegisterWrite {
            name,
            index,
            lo,
            hi,
        } => Ok(sw.register_write(all, name, *index, *lo, *hi)?),
        Op::McInsert { mgid, replicas } => {
            if sw.pre().group_get(*mgid).is_some() {
                return Err(P4Error::new(
                    tonic::Code::AlreadyExists,
                    format!("multicast group {mgid} already exists"),
                ));
            }
            mc_create(sw, *mgid, replicas)
        }
        Op::McModify { mgid, replicas } => {
            let old: Vec<(u16, u16)> = mc_replicas(sw, *mgid).ok_or_else(|| {
                P4Error::not_found(format!("multicast group {mgid} does not exist"))
            })?;
            mc_destroy(sw, *mgid)?;
            if let Err(e) = mc_create(sw, *mgid, replicas) {
                // Put the old group back so a refused modify changes nothing.
                let _ = mc_destroy(sw, *mgid);
                let _ = mc_create(sw, *mgid, &old);
                return Err(e);
            }
            Ok(())
        }
        Op::McDelete { mgid } => mc_destroy(sw, *mgid),
        Op::CloneSet {
            insert,
            id,
            port,
            max_len,
        } => {
            let exists = sw.mirror_sessions().get(*id).is_some();
            if *insert && exists {
                return Err(P4Error::new(
                    tonic::Code::AlreadyExists,
                    format!("clone session {id} already exists"),
                ));
            }
            if !*insert && !exists {
                return Err(P4Error::not_found(format!(
                    "clone session {id} does not exist"
                )));
            }
            let s = MirrorSession {
                direction: MirrorDirection::Both,
                dest: MirrorDest::Port(*port),
                max_len: *max_len,
                enabled: true,
            };
            Ok(sw.mirror_session_set(*id, s)?)
        }
        Op::TableRef {
            insert,
            table,
            keys,
            priority,
            to,
        } => {
            if *insert {
                sw.table_add_ref(all, table, &refs(keys), *priority, *to)?;
            } else {
                sw.table_modify_ref(all, table, &refs(keys), *priority, *to)?;
            }
            Ok(())
        }
        Op::MemberSet {
            insert,
            profile,
            member,
            action,
            params,
        } => {
            let exists = sw.profile_holds(all, profile, EntryRef::Member(*member))?;
            exists_as_wanted(*insert, exists, "member", *member, profile)?;
            Ok(sw.profile_member_set(all, profile, *member, action, &prefs(params))?)
        }
        Op::MemberDelete { profile, member } => {
            Ok(sw.profile_member_delete(all, profile, *member)?)
        }
        Op::GroupSet {
            insert,
            profile,
            group,
            members,
        } => {
            let exists = sw.profile_holds(all, profile, EntryRef::Group(*group))?;
            exists_as_wanted(*insert, exists, "group", *group, profile)?;
            Ok(sw.profile_group_set(all, profile, *group, members)?)
        }
        Op::MeterSet { name, indexes, cfg } => {
            for index in indexes.clone() {
                cells::meter_write(sw, Cell::Index { name, index }, *cfg)?;
            }
            Ok(())
        }
        Op::DirectMeterSet {
            table,
            keys,
            priority,
            cfg,
        } => {
            let keys = refs(keys);
            let cell = Cell::Direct {
                table,
                keys: &keys,
                priority: *priority,
            };
            cells::meter_write(sw, cell, *cfg)
        }
        Op::CounterWrite {
            name,
            indexes,
            packets,
            bytes,
        } => {
            for index in indexes.clone() {
                cells::counter_write(sw, Cell::Index { name, index }, *packets, *bytes)?;
            }
            Ok(())
        }
        Op::DirectCounterWrite {
            table,
            keys,
            priority,
            packets,
            bytes,
        } => {
            let keys = refs(keys);
            let cell = Cell::Direct {
                table,
                keys: &keys,
                priority: *priority,
            };
            cells::counter_write(sw, cell, *packets, *bytes)
        }
        Op::DefaultCounterWrite {
            table,
            packets,
            bytes,
        } => cells::counter_write(sw, Cell::Default { table }, *packets, *bytes),
        Op::GroupDelete { profile, group } => Ok(sw.profile_group_delete(all, profile, *group)?),
        Op::MemberCopy { profile, from, to } => member_copy(sw, profile, *from, *to),
        Op::ValueSetReplace { set, members } => value_set_replace(sw, set, members),
        Op::CloneDelete { id } => {
            if sw.mirror_sessions().get(*id).is_none() {
                return Err(P4Error::not_found(format!(
                    "clone session {id} does not exist"
                )));
            }
            Ok(sw.mirror_session_delete(*id)?)
        }
    }
}

/// Replaces every member of value set `set` on every pipe; a refused member puts the old
/// members back, so a refused write changes nothing.
fn value_set_replace(
    sw: &mut Switch,
    set: &str,
    members: &[Vec<(Value, Value)>],
) -> Result<(), P4Error> {
    let old = sw.value_set_entries(PipeSel::All, set)?;
    sw.value_set_clear(PipeSel::All, set)?;
    let refused = members
        .iter()
        .find_map(|m| sw.value_set_add(PipeSel::All, set, m).err());
    let Some(e) = refused else {
        return Ok(());
    };
    sw.value_set_clear(PipeSel::All, set)?;
    for o in &old {
        sw.value_set_add(PipeSel::Pipe(o.pipe), set, &o.fields)?;
    }
    Err(e.into())
}

/// INSERT of something that exists is ALREADY_EXISTS, MODIFY of something missing NOT_FOUND.
fn exists_as_wanted(
    insert: bool,
    exists: bool,
    what: &str,
    id: u32,
    profile: &str,
) -> Result<(), P4Error> {
    match (insert, exists) {
        (true, true) => Err(P4Error::new(
            tonic::Code::AlreadyExists,
            format!("action profile {profile}: {what} {id} already exists"),
        )),
        (false, false) => Err(P4Error::not_found(format!(
            "action profile {profile}: no {what} {id}"
        ))),
        _ => Ok(()),
    }
}

/// The (port, instance) replicas of a multicast group.
pub(super) fn mc_replicas(sw: &Switch, mgid: u16) -> Option<Vec<(u16, u16)>> {
    let members = sw.pre().group_get(mgid)?;
    let mut out = Vec::new();
    for m in members {
        if let Some(n) = sw.pre().node_get(m.node) {
            out.extend(n.ports.iter().map(|p| (*p, n.rid)));
        }
    }
    Some(out)
}
