//! Reads: a validated [`Query`] answered on one switch instance with P4Runtime entities, and
//! the merge of counter data over instances that each answer for their own pipes.

use pipeline::api::{CounterValue, PipeSel};
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;
use pipeline::tm::mirror::MirrorDest;

use super::super::cells;
use super::super::codec::{self, field_match, from_pisa_priority, from_value, P4Error};
use super::super::proto::p4::v1 as p4v1;
use super::super::schema::{IndexedInfo, Schema, TableInfo, ValueSetInfo};
use super::{mc_replicas, refs, Keys};

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
        /// With their direct meter configurations.
        meters: bool,
        /// The wildcard read's other filters: only entries with this action id, or this
        /// (P4Runtime) priority.
        action: Option<u32>,
        priority: Option<i32>,
    },
    /// The default entry of a table (with counters: its direct counter data too).
    Default {
        table: u32,
        counters: bool,
    },
    /// The direct counter data of a table's default entry.
    DefaultCounter {
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
        .filter(|c| dataplane::switch::owns_pipe(owns, u32::from(c.pipe)))
    {
        d.byte_count += c.bytes as i64;
        d.packet_count += c.packets as i64;
    }
    d
}

pub(crate) fn table_entity(
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

/// Whether a table entry passes a wildcard read's action and priority filters.
fn filtered_in(te: &p4v1::TableEntry, action: Option<u32>, priority: Option<i32>) -> bool {
    use p4v1::table_action::Type as T;
    let action_ok = action.is_none_or(|want| {
        matches!(te.action.as_ref().and_then(|a| a.r#type.as_ref()),
            Some(T::Action(a)) if a.action_id == want)
    });
    action_ok && priority.is_none_or(|p| te.priority == p)
}

pub(crate) fn entity(e: p4v1::entity::Entity) -> p4v1::Entity {
    p4v1::Entity { entity: Some(e) }
}

fn key_eq(e: &pipeline::api::TableEntry, keys: &[(String, KeyMatch)]) -> bool {
    keys.iter()
        .all(|(n, k)| e.keys.iter().any(|(en, ek)| en == n && ek == k))
}

pub(crate) fn entries_of(
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

/// The direct counter data of table `t`'s default entry (what misses that ran a counting
/// default action counted), summed over the pipes this instance `owns`.
fn default_data(sw: &Switch, t: &TableInfo, owns: u8) -> Result<p4v1::CounterData, P4Error> {
    let cell = pipeline::api::cells::Cell::Default { table: &t.name };
    Ok(owned_sum(&sw.counter_cell_read(PipeSel::All, cell)?, owns))
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
            meters,
            action,
            priority,
        } => {
            for id in tables {
                let t = &s.tables[id];
                for e in entries_of(sw, t, key)? {
                    let mut te = table_entity(s, t, &e)?;
                    if !filtered_in(&te, *action, *priority) {
                        continue;
                    }
                    if *counters && t.direct_counter.is_some() {
                        te.counter_data = Some(direct_data(sw, t, &e, owns)?);
                    }
                    if *meters && s.direct_meters.values().any(|id| *id == t.id) {
                        te.meter_config = cells::direct_meter_config(sw, t, &e)?;
                    }
                    if t.idle {
                        let (ttl, last_hit) =
                            sw.table_entry_idle(PipeSel::All, &t.name, &refs(&e.keys), e.priority)?;
                        te.idle_timeout_ns = ttl as i64;
                        if *since_hit {
                            te.time_since_last_hit = Some(p4v1::table_entry::IdleTimeout {
                                elapsed_ns: now.saturating_sub(last_hit) as i64,
                            });
                        }
                    }
                    out.push(entity(E::TableEntry(te)));
                }
            }
        }
        Query::Default { table, counters } => {
            let t = &s.tables[table];
            let (action, params) = sw.table_get_default(PipeSel::All, &t.name)?;
            let counter_data = match *counters && t.direct_counter.is_some() {
                true => Some(default_data(sw, t, owns)?),
                false => None,
            };
            out.push(entity(E::TableEntry(p4v1::TableEntry {
                table_id: t.id,
                is_default_action: true,
                action: Some(action_of(s, &action, &params)?),
                counter_data,
                ..Default::default()
            })));
        }
        Query::DefaultCounter { table } => {
            let t = &s.tables[table];
            out.push(entity(E::DirectCounterEntry(p4v1::DirectCounterEntry {
                table_entry: Some(p4v1::TableEntry {
                    table_id: t.id,
                    is_default_action: true,
                    ..Default::default()
                }),
                data: Some(default_data(sw, t, owns)?),
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
            let entries = entries_of(sw, t, key)?;
            if entries.is_empty() && key.is_some() {
                return Err(P4Error::not_found(format!(
                    "table `{}` has no entry with this key",
                    t.name
                )));
            }
            for e in entries {
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
                            metadata: Vec::new(),
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
            ..Default::default()
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
