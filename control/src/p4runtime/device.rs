//! What a P4Runtime request does to a switch, as runtime-API calls by name: validated writes
//! ([`Op`], built from an update against the [`Schema`] by [`super::write`]) and reads
//! ([`Query`], answered with P4Runtime entities). Both run on the switch's own thread through
//! [`dataplane::switch::SwitchHandle::each`], one call per batch.
//!
//! Multicast groups are PRE groups whose L1 nodes are numbered `mgid << 16 | instance` (one
//! node per replica instance, holding that instance's ports). Clone sessions are mirror
//! sessions with one port (both directions; `packet_length_bytes` truncates). A value set entry
//! is written whole (MODIFY replaces every member, on every pipe) and read from the first pipe.

use pipeline::api::cells::Cell;
use pipeline::api::{CounterValue, PipeSel};
use pipeline::externs::meter::MeterConfig;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;
use pipeline::table::profile::EntryRef;
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

use super::cells;
use super::codec::{self, field_match, from_pisa_priority, from_value, P4Error};
use super::proto::p4::v1 as p4v1;
use super::schema::{IndexedInfo, Schema, TableInfo, ValueSetInfo};

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
            if let Some(ttl) = ttl_ns {
                sw.table_entry_ttl(all, table, &refs(keys), *priority, *ttl)?;
            }
            Ok(())
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
            if let Some(ttl) = ttl_ns {
                sw.table_entry_ttl(all, table, &refs(keys), *priority, *ttl)?;
            }
            Ok(())
        }
        Op::TableDelete {
            table,
            keys,
            priority,
        } => Ok(sw.table_delete(all, table, &refs(keys), *priority)?),
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
            let exists = sw
                .profile_read(all, profile)?
                .members
                .iter()
                .any(|m| m.0 == *member);
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
            let exists = sw
                .profile_read(all, profile)?
                .groups
                .iter()
                .any(|g| g.0 == *group);
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
        Op::GroupDelete { profile, group } => Ok(sw.profile_group_delete(all, profile, *group)?),
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
fn mc_replicas(sw: &Switch, mgid: u16) -> Option<Vec<(u16, u16)>> {
    let members = sw.pre().group_get(mgid)?;
    let mut out = Vec::new();
    for m in members {
        if let Some(n) = sw.pre().node_get(m.node) {
            out.extend(n.ports.iter().map(|p| (*p, n.rid)));
        }
    }
    Some(out)
}

/// One validated read.
#[derive(Debug, Clone)]
pub enum Query {
    /// Entries of these tables; with a key, only that entry; with counters, their direct
    /// counter data too.
    Tables {
        tables: Vec<u32>,
        key: Option<(Keys, Option<u32>)>,
        counters: bool,
        /// With the time since each entry's last hit (tables with idle timeouts).
        since_hit: bool,
    },
    /// The default entry of a table.
    Default {
        table: u32,
    },
    /// Cells of an indexed counter (all, or one index).
    Counter {
        counter: u32,
        index: Option<u32>,
    },
    /// Direct counter data of one table's entries (all, or the one with this key).
    DirectCounter {
        table: u32,
        key: Option<(Keys, Option<u32>)>,
    },
    Register {
        register: u32,
        index: Option<u32>,
    },
    McGroups {
        mgid: Option<u16>,
    },
    /// Members of an action profile (all, or one).
    Members {
        profile: u32,
        member: Option<u32>,
    },
    /// Groups of an action selector (all, or one).
    Groups {
        profile: u32,
        group: Option<u32>,
    },
    /// Configurations of an indexed meter's cells (all, or one).
    Meter {
        meter: u32,
        index: Option<u32>,
    },
    /// Direct meter configurations of one table's entries (all, or the one with this key).
    DirectMeter {
        table: u32,
        key: Option<(Keys, Option<u32>)>,
    },
    /// Members of a parser value set.
    ValueSet {
        set: u32,
    },
    CloneSessions {
        id: Option<u16>,
    },
}

/// Sums counter cells of the pipes `owns` (a [`dataplane::switch::Part`] mask) answers for.
fn owned_sum(cells: &[CounterValue], owns: u8) -> p4v1::CounterData {
    let mut d = p4v1::CounterData::default();
    for c in cells
        .iter()
        .filter(|c| c.pipe < 8 && owns & (1 << c.pipe) != 0)
    {
        d.byte_count += c.bytes as i64;
        d.packet_count += c.packets as i64;
    }
    d
}

pub(super) fn table_entity(
    s: &Schema,
    t: &TableInfo,
    e: &pipeline::api::TableEntry,
) -> Result<p4v1::TableEntry, P4Error> {
    let mut out = p4v1::TableEntry {
        table_id: t.id,
        ..Default::default()
    };
    for (name, k) in &e.keys {
        let Some(f) = t.fields.iter().find(|f| &f.name == name) else {
            continue;
        };
        out.r#match.extend(field_match(f, k));
    }
    if t.needs_priority() {
        out.priority = from_pisa_priority(e.priority.unwrap_or(0));
    }
    out.action = Some(action_of(s, &e.action, &e.params)?);
    Ok(out)
}

fn action_of(
    s: &Schema,
    action: &str,
    params: &[(String, Value)],
) -> Result<p4v1::TableAction, P4Error> {
    use p4v1::table_action::Type as T;
    let id = params.first().map_or(0, |p| p.1 as u32);
    let t = match action {
        "$member" => T::ActionProfileMemberId(id),
        "$group" => T::ActionProfileGroupId(id),
        _ => T::Action(plain_action(s, action, params)?),
    };
    Ok(p4v1::TableAction { r#type: Some(t) })
}

fn plain_action(
    s: &Schema,
    action: &str,
    params: &[(String, Value)],
) -> Result<p4v1::Action, P4Error> {
    let id = *s.action_ids.get(action).ok_or_else(|| {
        P4Error::new(
            tonic::Code::Internal,
            format!("action `{action}` is not in the P4Info"),
        )
    })?;
    let info = &s.actions[&id];
    let params = params
        .iter()
        .filter_map(|(n, v)| {
            info.params
                .iter()
                .find(|p| &p.name == n)
                .map(|p| p4v1::action::Param {
                    param_id: p.id,
                    value: from_value(*v),
                })
        })
        .collect();
    Ok(p4v1::Action {
        action_id: id,
        params,
    })
}

pub(super) fn entity(e: p4v1::entity::Entity) -> p4v1::Entity {
    p4v1::Entity { entity: Some(e) }
}

fn key_eq(e: &pipeline::api::TableEntry, keys: &[(String, KeyMatch)]) -> bool {
    keys.iter()
        .all(|(n, k)| e.keys.iter().any(|(en, ek)| en == n && ek == k))
}

pub(super) fn entries_of(
    sw: &Switch,
    t: &TableInfo,
    key: &Option<(Keys, Option<u32>)>,
) -> Result<Vec<pipeline::api::TableEntry>, P4Error> {
    match key {
        None => Ok(sw.table_entries(PipeSel::All, &t.name)?),
        Some((keys, prio)) => Ok(
            match sw.table_get(PipeSel::All, &t.name, &refs(keys), *prio) {
                Ok(e) if key_eq(&e, keys) => vec![e],
                Ok(_) => Vec::new(),
                Err(pipeline::api::ApiError::EntryNotFound { .. }) => Vec::new(),
                Err(e) => return Err(e.into()),
            },
        ),
    }
}

fn direct_data(
    sw: &Switch,
    t: &TableInfo,
    e: &pipeline::api::TableEntry,
    owns: u8,
) -> Result<p4v1::CounterData, P4Error> {
    let keys = refs(&e.keys);
    let cells = sw.direct_counter_read(PipeSel::All, &t.name, &keys, e.priority)?;
    Ok(owned_sum(&cells, owns))
}

fn register_cell(sw: &Switch, r: &IndexedInfo, i: u32) -> Result<p4v1::P4Data, P4Error> {
    use p4v1::p4_data::Data;
    let cells = sw.register_read(PipeSel::All, &r.name, i)?;
    let c = cells
        .first()
        .copied()
        .unwrap_or(pipeline::api::RegisterValue {
            pipe: 0,
            lo: 0,
            hi: 0,
        });
    let bits = |v: Value| p4v1::P4Data {
        data: Some(Data::Bitstring(from_value(v))),
    };
    Ok(if r.paired {
        p4v1::P4Data {
            data: Some(Data::Tuple(p4v1::P4StructLike {
                members: vec![bits(c.lo), bits(c.hi)],
            })),
        }
    } else {
        bits(c.lo)
    })
}

/// Answers one query on one switch instance that answers for the pipes in `owns`.
pub fn read(
    sw: &Switch,
    owns: u8,
    s: &Schema,
    q: &Query,
    now: u64,
) -> Result<Vec<p4v1::Entity>, P4Error> {
    use p4v1::entity::Entity as E;
    let mut out = Vec::new();
    match q {
        Query::Tables {
            tables,
            key,
            counters,
            since_hit,
        } => {
            for id in tables {
                let t = &s.tables[id];
                let idle = if t.idle {
                    sw.table_idle(PipeSel::All, &t.name)?
                } else {
                    Vec::new()
                };
                for e in entries_of(sw, t, key)? {
                    let mut te = table_entity(s, t, &e)?;
                    if *counters && t.direct_counter.is_some() {
                        te.counter_data = Some(direct_data(sw, t, &e, owns)?);
                    }
                    if let Some(i) = idle.iter().find(|i| i.entry == e) {
                        te.idle_timeout_ns = i.ttl_ns as i64;
                        if *since_hit {
                            te.time_since_last_hit = Some(p4v1::table_entry::IdleTimeout {
                                elapsed_ns: now.saturating_sub(i.last_hit) as i64,
                            });
                        }
                    }
                    out.push(entity(E::TableEntry(te)));
                }
            }
        }
        Query::Default { table } => {
            let t = &s.tables[table];
            let (action, params) = sw.table_get_default(PipeSel::All, &t.name)?;
            out.push(entity(E::TableEntry(p4v1::TableEntry {
                table_id: t.id,
                is_default_action: true,
                action: Some(action_of(s, &action, &params)?),
                ..Default::default()
            })));
        }
        Query::Counter { counter, index } => {
            let c = &s.counters[counter];
            let range = match index {
                Some(i) => *i..*i + 1,
                None => 0..c.size,
            };
            for i in range {
                let cells = sw.counter_read(PipeSel::All, &c.name, i)?;
                out.push(entity(E::CounterEntry(p4v1::CounterEntry {
                    counter_id: c.id,
                    index: Some(p4v1::Index {
                        index: i64::from(i),
                    }),
                    data: Some(owned_sum(&cells, owns)),
                })));
            }
        }
        Query::DirectCounter { table, key } => {
            let t = &s.tables[table];
            for e in entries_of(sw, t, key)? {
                let data = direct_data(sw, t, &e, owns)?;
                out.push(entity(E::DirectCounterEntry(p4v1::DirectCounterEntry {
                    table_entry: Some(table_entity(s, t, &e)?),
                    data: Some(data),
                })));
            }
        }
        Query::Register { register, index } => {
            let r = &s.registers[register];
            let range = match index {
                Some(i) => *i..*i + 1,
                None => 0..r.size,
            };
            for i in range {
                out.push(entity(E::RegisterEntry(p4v1::RegisterEntry {
                    register_id: r.id,
                    index: Some(p4v1::Index {
                        index: i64::from(i),
                    }),
                    data: Some(register_cell(sw, r, i)?),
                })));
            }
        }
        Query::McGroups { mgid } => {
            let groups: Vec<u16> = match mgid {
                Some(g) => vec![*g],
                None => sw.pre().groups().map(|(g, _)| g).collect(),
            };
            for g in groups {
                let Some(reps) = mc_replicas(sw, g) else {
                    continue;
                };
                out.push(entity(E::PacketReplicationEngineEntry(pre_entry(
                    p4v1::packet_replication_engine_entry::Type::MulticastGroupEntry(
                        p4v1::MulticastGroupEntry {
                            multicast_group_id: u32::from(g),
                            replicas: replicas(&reps),
                        },
                    ),
                ))));
            }
        }
        Query::Members { profile, member } => {
            let p = &s.profiles[profile];
            let view = sw.profile_read(PipeSel::All, &p.name)?;
            for (id, action, params) in &view.members {
                if member.is_some_and(|m| m != *id) {
                    continue;
                }
                out.push(entity(E::ActionProfileMember(p4v1::ActionProfileMember {
                    action_profile_id: p.id,
                    member_id: *id,
                    action: Some(plain_action(s, action, params)?),
                })));
            }
        }
        Query::Groups { profile, group } => {
            let p = &s.profiles[profile];
            let view = sw.profile_read(PipeSel::All, &p.name)?;
            for (id, members) in &view.groups {
                if group.is_some_and(|g| g != *id) {
                    continue;
                }
                out.push(entity(E::ActionProfileGroup(p4v1::ActionProfileGroup {
                    action_profile_id: p.id,
                    group_id: *id,
                    members: members
                        .iter()
                        .map(|m| p4v1::action_profile_group::Member {
                            member_id: *m,
                            weight: 1,
                            watch_kind: None,
                        })
                        .collect(),
                    max_size: 0,
                })));
            }
        }
        Query::Meter { .. } | Query::DirectMeter { .. } => out = cells::read_meters(sw, s, q)?,
        Query::ValueSet { set } => {
            let v = &s.value_sets[set];
            out.push(entity(E::ValueSetEntry(value_set_entity(sw, v)?)));
        }
        Query::CloneSessions { id } => {
            for (sid, sess) in sw.mirror_sessions().iter() {
                if id.is_some_and(|i| i != sid) {
                    continue;
                }
                let MirrorDest::Port(port) = sess.dest else {
                    continue;
                };
                out.push(entity(E::PacketReplicationEngineEntry(pre_entry(
                    p4v1::packet_replication_engine_entry::Type::CloneSessionEntry(
                        p4v1::CloneSessionEntry {
                            session_id: u32::from(sid),
                            replicas: replicas(&[(port, 0)]),
                            class_of_service: 0,
                            packet_length_bytes: sess.max_len.map_or(0, i32::from),
                        },
                    ),
                ))));
            }
        }
    }
    Ok(out)
}

/// A value set's members as read from its first pipe (writes go to every pipe). A field
/// whose mask is not all ones (set through `pisa ctl` or a table file) reads as ternary.
fn value_set_entity(sw: &Switch, v: &ValueSetInfo) -> Result<p4v1::ValueSetEntry, P4Error> {
    let entries = sw.value_set_entries(PipeSel::All, &v.name)?;
    let first = entries.iter().map(|e| e.pipe).min();
    let members = entries
        .iter()
        .filter(|e| Some(e.pipe) == first)
        .map(|e| p4v1::ValueSetMember {
            r#match: v
                .fields
                .iter()
                .zip(&e.fields)
                .filter_map(|(f, &(value, mask))| {
                    let k = if mask == codec::mask(f.width) {
                        KeyMatch::Exact(value)
                    } else {
                        KeyMatch::Ternary { value, mask }
                    };
                    codec::field_match(f, &k)
                })
                .collect(),
        })
        .collect();
    Ok(p4v1::ValueSetEntry {
        value_set_id: v.id,
        members,
    })
}

fn pre_entry(t: p4v1::packet_replication_engine_entry::Type) -> p4v1::PacketReplicationEngineEntry {
    p4v1::PacketReplicationEngineEntry { r#type: Some(t) }
}

fn replicas(r: &[(u16, u16)]) -> Vec<p4v1::Replica> {
    r.iter()
        .map(|(p, rid)| p4v1::Replica {
            egress_port: u32::from(*p),
            instance: u32::from(*rid),
        })
        .collect()
}

/// Adds the counter data of `b` (another instance's answer to the same query, in the same
/// order) into `a`: each instance counts only the pipes it answers for.
pub fn merge_counts(a: &mut [p4v1::Entity], b: &[p4v1::Entity]) {
    use p4v1::entity::Entity as E;
    fn add(x: &mut Option<p4v1::CounterData>, y: &Option<p4v1::CounterData>) {
        if let (Some(x), Some(y)) = (x, y) {
            x.byte_count += y.byte_count;
            x.packet_count += y.packet_count;
        }
    }
    for (x, y) in a.iter_mut().zip(b) {
        match (&mut x.entity, &y.entity) {
            (Some(E::CounterEntry(x)), Some(E::CounterEntry(y))) => add(&mut x.data, &y.data),
            (Some(E::DirectCounterEntry(x)), Some(E::DirectCounterEntry(y))) => {
                add(&mut x.data, &y.data)
            }
            (Some(E::TableEntry(x)), Some(E::TableEntry(y))) => {
                add(&mut x.counter_data, &y.counter_data)
            }
            _ => {}
        }
    }
}
