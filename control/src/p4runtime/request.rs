//! P4Runtime requests checked against the [`Schema`] and turned into what the switch does:
//! an update into a [`device::Op`], a read entity into a [`device::Query`]. Every refusal is a
//! [`P4Error`] with the code the specification names (unknown id: NOT_FOUND; malformed
//! match, action or value: INVALID_ARGUMENT; writes to const tables: PERMISSION_DENIED;
//! what pisa does not model: UNIMPLEMENTED).

use pipeline::ir::{KeyMatch, MatchKind, Value};

use super::cells;
use super::codec::{key_match, mask, to_pisa_priority, to_value, P4Error};
use super::device::{Keys, Op, Params, Query};
use super::proto::p4::config::v1::action_ref::Scope;
use super::proto::p4::v1 as p4v1;
use super::schema::{IndexedInfo, ProfileInfo, Schema, TableInfo, ValueSetInfo};
use pipeline::table::profile::EntryRef;

use p4v1::entity::Entity as E;
use p4v1::update::Type as U;

pub(super) fn table(s: &Schema, id: u32) -> Result<&TableInfo, P4Error> {
    s.tables
        .get(&id)
        .ok_or_else(|| P4Error::not_found(format!("no table with id {id:#x}")))
}

/// The key of a table entry (fields by name; don't-cares filled in by the runtime API) and
/// its pisa priority.
pub fn entry_key(t: &TableInfo, e: &p4v1::TableEntry) -> Result<(Keys, Option<u32>), P4Error> {
    let mut keys: Keys = Vec::new();
    for m in &e.r#match {
        let f = t
            .fields
            .iter()
            .find(|f| f.id == m.field_id)
            .ok_or_else(|| {
                P4Error::invalid(format!(
                    "table `{}` has no match field with id {}",
                    t.name, m.field_id
                ))
            })?;
        if keys.iter().any(|(n, _)| n == &f.name) {
            return Err(P4Error::invalid(format!(
                "match field `{}` is given twice",
                f.name
            )));
        }
        keys.push((f.name.clone(), key_match(f, m)?));
    }
    for f in &t.fields {
        if f.kind == MatchKind::Exact && !keys.iter().any(|(n, _)| n == &f.name) {
            return Err(P4Error::invalid(format!(
                "exact match field `{}` of table `{}` is missing",
                f.name, t.name
            )));
        }
    }
    let priority = if t.needs_priority() {
        Some(to_pisa_priority(e.priority)?)
    } else if e.priority != 0 {
        return Err(P4Error::invalid(format!(
            "table `{}` has no ternary/range match: entries take no priority (got {})",
            t.name, e.priority
        )));
    } else {
        None
    };
    Ok((keys, priority))
}

/// The member or group an entry of a table with an action profile points at.
fn profile_ref(
    s: &Schema,
    t: &TableInfo,
    a: Option<&p4v1::TableAction>,
) -> Result<EntryRef, P4Error> {
    use p4v1::table_action::Type as T;
    let selector = s
        .profiles
        .values()
        .any(|p| p.with_selector && p.tables.contains(&t.id));
    match a.and_then(|a| a.r#type.as_ref()) {
        Some(T::ActionProfileMemberId(m)) => Ok(EntryRef::Member(*m)),
        Some(T::ActionProfileGroupId(g)) if selector => Ok(EntryRef::Group(*g)),
        Some(T::ActionProfileGroupId(_)) => Err(P4Error::invalid(format!(
            "table `{}` has an action profile without a selector: entries point at members",
            t.name
        ))),
        Some(T::ActionProfileActionSet(_)) => Err(P4Error::unimplemented(
            "an action set (one-shot programming) is expanded by the P4Runtime server, not here",
        )),
        Some(T::Action(_)) => Err(P4Error::invalid(format!(
            "table `{}` has an action profile: entries point at a member or a group",
            t.name
        ))),
        None => Err(P4Error::invalid(format!(
            "table `{}`: the entry has no action",
            t.name
        ))),
    }
}

fn profile(s: &Schema, id: u32) -> Result<&ProfileInfo, P4Error> {
    s.profiles
        .get(&id)
        .ok_or_else(|| P4Error::not_found(format!("no action profile with id {id:#x}")))
}

fn member_op(s: &Schema, kind: U, m: &p4v1::ActionProfileMember) -> Result<Op, P4Error> {
    let p = profile(s, m.action_profile_id)?;
    if kind == U::Delete {
        return Ok(Op::MemberDelete {
            profile: p.name.clone(),
            member: m.member_id,
        });
    }
    let t = p
        .tables
        .first()
        .and_then(|id| s.tables.get(id))
        .ok_or_else(|| {
            P4Error::invalid(format!("action profile `{}` implements no table", p.name))
        })?;
    let action = m.action.clone().map(|a| p4v1::TableAction {
        r#type: Some(p4v1::table_action::Type::Action(a)),
    });
    let (action, params) = entry_action(s, t, action.as_ref(), false)?;
    Ok(Op::MemberSet {
        insert: kind == U::Insert,
        profile: p.name.clone(),
        member: m.member_id,
        action,
        params,
    })
}

fn group_op(s: &Schema, kind: U, g: &p4v1::ActionProfileGroup) -> Result<Op, P4Error> {
    let p = profile(s, g.action_profile_id)?;
    if !p.with_selector {
        return Err(P4Error::invalid(format!(
            "action profile `{}` has no selector: it has no groups",
            p.name
        )));
    }
    if kind == U::Delete {
        return Ok(Op::GroupDelete {
            profile: p.name.clone(),
            group: g.group_id,
        });
    }
    check_group_size(p, g)?;
    // Watched ports are followed by the server (`server::watch`); here they are checked.
    group_watches(g)?;
    let mut members = Vec::new();
    for m in &g.members {
        // Weights above 1 are the server's business (`server::weights`); 0 counts as 1.
        if m.weight < 0 {
            return Err(P4Error::invalid(format!(
                "group {}: member {} has weight {}; weights are positive",
                g.group_id, m.member_id, m.weight
            )));
        }
        if members.contains(&m.member_id) {
            return Err(P4Error::invalid(format!(
                "group {}: member {} is given twice",
                g.group_id, m.member_id
            )));
        }
        members.push(m.member_id);
    }
    Ok(Op::GroupSet {
        insert: kind == U::Insert,
        profile: p.name.clone(),
        group: g.group_id,
        members,
    })
}

/// A group's `max_size` is at most the profile's `max_group_size` (INVALID_ARGUMENT), and
/// its members fit both (RESOURCE_EXHAUSTED), as the spec's rules on setting max_size say.
fn check_group_size(p: &ProfileInfo, g: &p4v1::ActionProfileGroup) -> Result<(), P4Error> {
    let max = u32::try_from(g.max_size).map_err(|_| {
        P4Error::invalid(format!(
            "group {}: max_size {} is negative",
            g.group_id, g.max_size
        ))
    })?;
    if p.max_group_size > 0 && max > p.max_group_size {
        return Err(P4Error::invalid(format!(
            "group {}: max_size {max} is above action profile `{}`'s max_group_size {}",
            g.group_id, p.name, p.max_group_size
        )));
    }
    // The size counts weighted members: a member of weight `w` takes `w` places.
    let weighted: u64 = g.members.iter().map(|m| m.weight.max(1) as u64).sum();
    let limit = [max, p.max_group_size].into_iter().filter(|m| *m > 0).min();
    if let Some(limit) = limit.filter(|l| weighted > u64::from(*l)) {
        return Err(P4Error::new(
            tonic::Code::ResourceExhausted,
            format!(
                "group {} has {} members (weighted: {weighted}), more than its size {limit}",
                g.group_id,
                g.members.len()
            ),
        ));
    }
    Ok(())
}

/// The action of an entry: its name and parameters by name, checked against the table.
fn entry_action(
    s: &Schema,
    t: &TableInfo,
    a: Option<&p4v1::TableAction>,
    default: bool,
) -> Result<(String, Params), P4Error> {
    use p4v1::table_action::Type as T;
    let act = match a.and_then(|a| a.r#type.as_ref()) {
        Some(T::Action(act)) => act,
        Some(_) => {
            return Err(P4Error::invalid(format!(
                "table `{}` has no action profile: its entries name an action, not a member, \
                 group or action set",
                t.name
            )))
        }
        None => {
            return Err(P4Error::invalid(format!(
                "table `{}`: the entry has no action",
                t.name
            )))
        }
    };
    let info = s
        .actions
        .get(&act.action_id)
        .ok_or_else(|| P4Error::not_found(format!("no action with id {:#x}", act.action_id)))?;
    let Some(scope) = t.actions.get(&act.action_id) else {
        return Err(P4Error::invalid(format!(
            "action `{}` is not an action of table `{}`",
            info.name, t.name
        )));
    };
    if !default && *scope == Scope::DefaultOnly as i32 {
        return Err(P4Error::new(
            tonic::Code::PermissionDenied,
            format!(
                "action `{}` is @defaultonly in table `{}`",
                info.name, t.name
            ),
        ));
    }
    if default && *scope == Scope::TableOnly as i32 {
        return Err(P4Error::new(
            tonic::Code::PermissionDenied,
            format!("action `{}` is @tableonly in table `{}`", info.name, t.name),
        ));
    }
    let mut params: Params = Vec::new();
    for p in &act.params {
        let pi = info
            .params
            .iter()
            .find(|x| x.id == p.param_id)
            .ok_or_else(|| {
                P4Error::invalid(format!(
                    "action `{}` has no parameter with id {}",
                    info.name, p.param_id
                ))
            })?;
        if params.iter().any(|(n, _)| n == &pi.name) {
            return Err(P4Error::invalid(format!(
                "parameter `{}` of action `{}` is given twice",
                pi.name, info.name
            )));
        }
        let what = format!("parameter `{}` of action `{}`", pi.name, info.name);
        params.push((pi.name.clone(), to_value(&p.value, pi.width, &what)?));
    }
    if let Some(missing) = info
        .params
        .iter()
        .find(|p| !params.iter().any(|(n, _)| n == &p.name))
    {
        return Err(P4Error::invalid(format!(
            "action `{}` needs parameter `{}`",
            info.name, missing.name
        )));
    }
    Ok((info.name.clone(), params))
}

fn table_op(s: &Schema, kind: U, e: &p4v1::TableEntry) -> Result<Op, P4Error> {
    let t = table(s, e.table_id)?;
    if e.is_default_action {
        if kind != U::Modify {
            return Err(P4Error::invalid(format!(
                "table `{}`: the default entry can only be modified",
                t.name
            )));
        }
        if !e.r#match.is_empty() || e.priority != 0 {
            return Err(P4Error::invalid(format!(
                "table `{}`: the default entry has no match and no priority",
                t.name
            )));
        }
        if t.const_default {
            return Err(P4Error::new(
                tonic::Code::PermissionDenied,
                format!("table `{}` has a const default action", t.name),
            ));
        }
        // The default entry's direct counter may be written with it (`counter_data`).
        return with_direct_resources(s, e, default_op(s, t, e)?);
    }
    if t.is_const {
        return Err(P4Error::new(
            tonic::Code::PermissionDenied,
            format!("table `{}` has const entries: they cannot change", t.name),
        ));
    }
    let ttl_ns = idle_timeout(t, e)?;
    let (keys, priority) = entry_key(t, e)?;
    let table = t.name.clone();
    if t.has_profile && (kind == U::Insert || kind == U::Modify && e.action.is_some()) {
        let to = profile_ref(s, t, e.action.as_ref())?;
        let op = Op::TableRef {
            insert: kind == U::Insert,
            table,
            keys,
            priority,
            to,
        };
        return with_direct_resources(s, e, op);
    }
    let op = match kind {
        U::Delete => {
            return Ok(Op::TableDelete {
                table,
                keys,
                priority,
            })
        }
        // The spec: a MODIFY with the action unset leaves the action as it is (only the
        // entry's direct resources and idle timeout change, if given).
        U::Modify if e.action.is_none() => Op::TableTouch {
            table,
            keys,
            priority,
            ttl_ns,
        },
        U::Insert | U::Modify => {
            let (action, params) = entry_action(s, t, e.action.as_ref(), false)?;
            if kind == U::Insert {
                Op::TableInsert {
                    table,
                    keys,
                    priority,
                    action,
                    params,
                    ttl_ns,
                }
            } else {
                Op::TableModify {
                    table,
                    keys,
                    priority,
                    action,
                    params,
                    ttl_ns,
                }
            }
        }
        U::Unspecified => return Err(P4Error::invalid("update type is UNSPECIFIED")),
    };
    with_direct_resources(s, e, op)
}

/// The default entry's MODIFY: an action sets it; no action puts back the program's default
/// (the spec's Default Entry). Tables with an action profile keep their default (the spec
/// fixes it for indirect tables).
fn default_op(s: &Schema, t: &TableInfo, e: &p4v1::TableEntry) -> Result<Op, P4Error> {
    let table = t.name.clone();
    if e.action.is_none() {
        return Ok(Op::DefaultReset { table });
    }
    if t.has_profile {
        return Err(P4Error::new(
            tonic::Code::PermissionDenied,
            format!(
                "table `{}` has an action profile: its default entry cannot be modified",
                t.name
            ),
        ));
    }
    let (action, params) = entry_action(s, t, e.action.as_ref(), true)?;
    Ok(Op::DefaultSet {
        table,
        action,
        params,
    })
}

/// `op` (an INSERT or MODIFY of a table entry) followed by the writes of the entry's
/// `counter_data` and `meter_config`, when the update gives them.
fn with_direct_resources(s: &Schema, e: &p4v1::TableEntry, op: Op) -> Result<Op, P4Error> {
    let mut then = Vec::new();
    if let Some(d) = &e.counter_data {
        then.push(cells::direct_counter_op(
            s,
            U::Modify,
            &p4v1::DirectCounterEntry {
                table_entry: Some(e.clone()),
                data: Some(*d),
            },
        )?);
    }
    if let Some(m) = &e.meter_config {
        then.push(cells::direct_meter_op(
            s,
            U::Modify,
            &p4v1::DirectMeterEntry {
                table_entry: Some(e.clone()),
                config: Some(*m),
            },
        )?);
    }
    Ok(match then.is_empty() {
        true => op,
        false => Op::Seq(std::iter::once(op).chain(then).collect()),
    })
}

/// An entry's idle timeout: `Some` for a table that has them (0: never idle), refused for
/// one that does not (its P4Info says NO_TIMEOUT).
fn idle_timeout(t: &TableInfo, e: &p4v1::TableEntry) -> Result<Option<u64>, P4Error> {
    let ns = u64::try_from(e.idle_timeout_ns).map_err(|_| {
        P4Error::invalid(format!("idle_timeout_ns {} is negative", e.idle_timeout_ns))
    })?;
    if !t.idle && ns != 0 {
        return Err(P4Error::invalid(format!(
            "table `{}` has no idle timeout (its P4Info says NO_TIMEOUT): idle_timeout_ns must be 0",
            t.name
        )));
    }
    Ok(t.idle.then_some(ns))
}

fn port(p: u32, what: &str) -> Result<u16, P4Error> {
    u16::try_from(p)
        .ok()
        .filter(|p| *p < 512)
        .ok_or_else(|| P4Error::invalid(format!("{what}: port {p} is not a device port")))
}

/// The members of a group that watch a port, and the port: `watch_port` (a bytestring,
/// big-endian, as a replica's `port`) or the deprecated `watch`.
pub fn group_watches(g: &p4v1::ActionProfileGroup) -> Result<Vec<(u32, u16)>, P4Error> {
    use p4v1::action_profile_group::member::WatchKind as W;
    let mut out = Vec::new();
    for m in &g.members {
        let what = format!("group {} member {}: watched", g.group_id, m.member_id);
        let p = match &m.watch_kind {
            None => continue,
            Some(W::Watch(p)) => u32::try_from(*p)
                .map_err(|_| P4Error::invalid(format!("{what} port {p} is negative")))?,
            Some(W::WatchPort(b)) if b.len() > 4 => {
                return Err(P4Error::invalid(format!(
                    "{what} port {b:02x?} is wider than 32 bits"
                )))
            }
            Some(W::WatchPort(b)) => b.iter().fold(0u32, |n, b| n << 8 | u32::from(*b)),
        };
        out.push((m.member_id, port(p, &what)?));
    }
    Ok(out)
}

/// A replica's port: `egress_port`, or the 1.4 bytestring `port` (big-endian).
fn replica_port(r: &p4v1::Replica) -> Result<u16, P4Error> {
    if r.port.is_empty() {
        return port(r.egress_port, "replica");
    }
    if r.egress_port != 0 {
        return Err(P4Error::invalid(
            "a replica sets both `egress_port` and `port`: they are one oneof",
        ));
    }
    if r.port.len() > 4 {
        return Err(P4Error::invalid(format!(
            "replica port {:02x?} is wider than 32 bits",
            r.port
        )));
    }
    let n = r.port.iter().fold(0u32, |n, b| n << 8 | u32::from(*b));
    port(n, "replica")
}

/// The (port, instance) pairs of a replica list; each pair is given once.
fn replicas(r: &[p4v1::Replica]) -> Result<Vec<(u16, u16)>, P4Error> {
    let mut out: Vec<(u16, u16)> = Vec::with_capacity(r.len());
    for x in r {
        let rid = u16::try_from(x.instance).map_err(|_| {
            P4Error::invalid(format!("replica instance {} is above 65535", x.instance))
        })?;
        let pair = (replica_port(x)?, rid);
        if out.contains(&pair) {
            return Err(P4Error::invalid(format!(
                "replica (port {}, instance {}) is given twice",
                pair.0, pair.1
            )));
        }
        out.push(pair);
    }
    Ok(out)
}

fn pre_op(kind: U, e: &p4v1::PacketReplicationEngineEntry) -> Result<Op, P4Error> {
    use p4v1::packet_replication_engine_entry::Type as T;
    match &e.r#type {
        Some(T::MulticastGroupEntry(g)) => {
            let mgid = u16::try_from(g.multicast_group_id)
                .ok()
                .filter(|g| *g != 0)
                .ok_or_else(|| {
                    P4Error::invalid(format!(
                        "multicast group id {} is outside 1..=65535",
                        g.multicast_group_id
                    ))
                })?;
            match kind {
                U::Insert => Ok(Op::McInsert {
                    mgid,
                    replicas: replicas(&g.replicas)?,
                }),
                U::Modify => Ok(Op::McModify {
                    mgid,
                    replicas: replicas(&g.replicas)?,
                }),
                U::Delete => Ok(Op::McDelete { mgid }),
                U::Unspecified => Err(P4Error::invalid("update type is UNSPECIFIED")),
            }
        }
        Some(T::CloneSessionEntry(c)) => {
            let id = u16::try_from(c.session_id).map_err(|_| {
                P4Error::invalid(format!("clone session id {} is too large", c.session_id))
            })?;
            if kind == U::Delete {
                return Ok(Op::CloneDelete { id });
            }
            let [r] = c.replicas.as_slice() else {
                return Err(P4Error::unimplemented(format!(
                    "clone session {id}: pisa's mirror sessions have one replica (got {})",
                    c.replicas.len()
                )));
            };
            let max_len = match c.packet_length_bytes {
                0 => None,
                n => Some(u16::try_from(n).map_err(|_| {
                    P4Error::invalid(format!(
                        "clone session {id}: packet length {n} is out of range"
                    ))
                })?),
            };
            Ok(Op::CloneSet {
                insert: kind == U::Insert,
                id,
                port: replica_port(r)?,
                max_len,
            })
        }
        None => Err(P4Error::invalid(
            "packet replication engine entry without a type",
        )),
    }
}

fn register_op(s: &Schema, kind: U, e: &p4v1::RegisterEntry) -> Result<Op, P4Error> {
    use p4v1::p4_data::Data;
    let r = s
        .registers
        .get(&e.register_id)
        .ok_or_else(|| P4Error::not_found(format!("no register with id {:#x}", e.register_id)))?;
    if kind != U::Modify {
        return Err(P4Error::invalid(format!(
            "register `{}`: cells can only be modified",
            r.name
        )));
    }
    let index = e
        .index
        .as_ref()
        .ok_or_else(|| P4Error::unimplemented("writing every register cell at once"))?
        .index;
    if index < 0 {
        return Err(P4Error::invalid(format!(
            "register `{}`: index {index} is negative",
            r.name
        )));
    }
    let index = u32::try_from(index)
        .ok()
        .filter(|i| *i < r.size)
        .ok_or_else(|| {
            P4Error::new(
                tonic::Code::OutOfRange,
                format!(
                    "register `{}`: index {index} is outside 0..{}",
                    r.name, r.size
                ),
            )
        })?;
    let what = format!("register `{}`", r.name);
    let bits = |d: &p4v1::P4Data| match &d.data {
        Some(Data::Bitstring(b)) => to_value(b, r.width, &what),
        _ => Err(P4Error::invalid(format!("{what}: expected a bitstring"))),
    };
    let (lo, hi) = match (e.data.as_ref().and_then(|d| d.data.as_ref()), r.paired) {
        (Some(Data::Tuple(t)) | Some(Data::Struct(t)), true) if t.members.len() == 2 => {
            (bits(&t.members[0])?, Some(bits(&t.members[1])?))
        }
        (Some(_), false) => (
            bits(e.data.as_ref().unwrap_or(&p4v1::P4Data::default()))?,
            None,
        ),
        _ => {
            return Err(P4Error::invalid(format!(
                "{what}: the data does not match the register's type"
            )))
        }
    };
    Ok(Op::RegisterWrite {
        name: r.name.clone(),
        index,
        lo,
        hi,
    })
}

/// One update of a Write as a switch operation.
pub fn update_op(s: &Schema, u: &p4v1::Update) -> Result<Op, P4Error> {
    let kind = U::try_from(u.r#type).unwrap_or(U::Unspecified);
    if kind == U::Unspecified {
        return Err(P4Error::invalid("update type is UNSPECIFIED"));
    }
    match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
        Some(E::TableEntry(e)) => table_op(s, kind, e),
        Some(E::PacketReplicationEngineEntry(e)) => pre_op(kind, e),
        Some(E::RegisterEntry(e)) => register_op(s, kind, e),
        Some(E::ActionProfileMember(m)) => member_op(s, kind, m),
        Some(E::MeterEntry(m)) => cells::meter_op(s, kind, m),
        Some(E::DirectMeterEntry(m)) => cells::direct_meter_op(s, kind, m),
        Some(E::ActionProfileGroup(g)) => group_op(s, kind, g),
        Some(E::ValueSetEntry(v)) => value_set_op(s, kind, v),
        Some(E::CounterEntry(c)) => cells::counter_op(s, kind, c),
        Some(E::DirectCounterEntry(c)) => cells::direct_counter_op(s, kind, c),
        Some(_) => Err(P4Error::unimplemented(
            "this entity type is not served over P4Runtime yet (see docs/p4runtime.md)",
        )),
        None => Err(P4Error::invalid("update without an entity")),
    }
}

fn value_set(s: &Schema, id: u32) -> Result<&ValueSetInfo, P4Error> {
    s.value_sets
        .get(&id)
        .ok_or_else(|| P4Error::not_found(format!("no value set with id {id:#x}")))
}

/// A value set write: MODIFY only, the members replace the set's contents (an empty list
/// clears it), as the specification defines value set updates.
fn value_set_op(s: &Schema, kind: U, v: &p4v1::ValueSetEntry) -> Result<Op, P4Error> {
    let info = value_set(s, v.value_set_id)?;
    if kind != U::Modify {
        return Err(P4Error::invalid(format!(
            "value set `{}`: value set entries are written with MODIFY only (the members \
             replace the set's contents), not {}",
            info.name,
            kind.as_str_name()
        )));
    }
    if v.members.len() > info.size as usize {
        return Err(P4Error::new(
            tonic::Code::ResourceExhausted,
            format!(
                "value set `{}` holds {} members, the write gives {}",
                info.name,
                info.size,
                v.members.len()
            ),
        ));
    }
    let mut members: Vec<Vec<(Value, Value)>> = Vec::with_capacity(v.members.len());
    for m in &v.members {
        let fields = value_set_member(info, m)?;
        if members.contains(&fields) {
            return Err(P4Error::invalid(format!(
                "value set `{}`: a member is given twice",
                info.name
            )));
        }
        members.push(fields);
    }
    Ok(Op::ValueSetReplace {
        set: info.name.clone(),
        members,
    })
}

/// One member: a value and mask per field, in the set's field order.
fn value_set_member(
    info: &ValueSetInfo,
    m: &p4v1::ValueSetMember,
) -> Result<Vec<(Value, Value)>, P4Error> {
    let mut out = Vec::with_capacity(info.fields.len());
    for f in &info.fields {
        let mut given = m.r#match.iter().filter(|x| x.field_id == f.id);
        let field = match (given.next(), given.next()) {
            (Some(_), Some(_)) => {
                return Err(P4Error::invalid(format!(
                    "value set `{}`: field `{}` is given twice",
                    info.name, f.name
                )))
            }
            (Some(x), None) => match key_match(f, x)? {
                KeyMatch::Exact(v) => (v, mask(f.width)),
                KeyMatch::Ternary { value, mask } => (value, mask),
                _ => {
                    return Err(P4Error::unimplemented(format!(
                    "value set `{}`: field `{}` matches by {}; value sets match exact or ternary",
                    info.name, f.name, f.kind
                )))
                }
            },
            (None, _) if f.kind == MatchKind::Ternary => (0, 0),
            (None, _) => {
                return Err(P4Error::invalid(format!(
                    "value set `{}`: exact field `{}` is missing",
                    info.name, f.name
                )))
            }
        };
        out.push(field);
    }
    if let Some(x) = m
        .r#match
        .iter()
        .find(|x| !info.fields.iter().any(|f| f.id == x.field_id))
    {
        return Err(P4Error::invalid(format!(
            "value set `{}` has no field with id {}",
            info.name, x.field_id
        )));
    }
    Ok(out)
}

pub(super) fn index_of(
    i: &Option<p4v1::Index>,
    size: u32,
    what: &str,
) -> Result<Option<u32>, P4Error> {
    match i {
        None => Ok(None),
        Some(ix) if ix.index < 0 => Err(P4Error::invalid(format!(
            "{what}: index {} is negative",
            ix.index
        ))),
        Some(ix) => u32::try_from(ix.index)
            .ok()
            .filter(|x| *x < size)
            .map(Some)
            .ok_or_else(|| {
                P4Error::new(
                    tonic::Code::OutOfRange,
                    format!("{what}: index {} is outside 0..{size}", ix.index),
                )
            }),
    }
}

pub(super) fn table_filter(
    t: &TableInfo,
    e: &p4v1::TableEntry,
) -> Result<Option<(Keys, Option<u32>)>, P4Error> {
    if e.r#match.is_empty() {
        return Ok(None);
    }
    let (keys, prio) = entry_key(t, e)?;
    Ok(Some((keys, prio)))
}

/// Reads of an indexed object (counter, register, meter): id 0 reads every object of the
/// kind, no index every cell.
pub(super) fn indexed_query(
    objects: &std::collections::BTreeMap<u32, IndexedInfo>,
    id: u32,
    index: &Option<p4v1::Index>,
    what: &str,
    query: impl Fn(u32, Option<u32>) -> Query,
) -> Result<Vec<Query>, P4Error> {
    if id == 0 {
        return Ok(objects.keys().map(|&id| query(id, None)).collect());
    }
    let info = objects
        .get(&id)
        .ok_or_else(|| P4Error::not_found(format!("no {what} with id {id:#x}")))?;
    Ok(vec![query(
        info.id,
        index_of(index, info.size, &info.name)?,
    )])
}

/// One entity of a Read as a query (id 0 reads every object of its kind).
pub fn read_query(s: &Schema, e: &p4v1::Entity) -> Result<Vec<Query>, P4Error> {
    use p4v1::packet_replication_engine_entry::Type as T;
    match &e.entity {
        Some(E::TableEntry(te)) => {
            let tables = if te.table_id == 0 {
                s.tables.keys().copied().collect()
            } else {
                let t = table(s, te.table_id)?;
                if te.is_default_action {
                    return Ok(vec![Query::Default {
                        table: t.id,
                        counters: te.counter_data.is_some(),
                    }]);
                }
                vec![t.id]
            };
            let key = match te.table_id {
                0 => None,
                id => table_filter(table(s, id)?, te)?,
            };
            let action = match te.action.as_ref().and_then(|a| a.r#type.as_ref()) {
                Some(p4v1::table_action::Type::Action(a)) if a.action_id != 0 => Some(a.action_id),
                _ => None,
            };
            Ok(vec![Query::Tables {
                tables,
                // With a key, the priority is part of it; without, it filters.
                priority: (key.is_none() && te.priority != 0).then_some(te.priority),
                key,
                counters: te.counter_data.is_some(),
                since_hit: te.time_since_last_hit.is_some(),
                meters: te.meter_config.is_some(),
                action,
            }])
        }
        Some(E::CounterEntry(c)) => indexed_query(
            &s.counters,
            c.counter_id,
            &c.index,
            "counter",
            |counter, index| Query::Counter { counter, index },
        ),
        Some(E::DirectCounterEntry(d)) => {
            let te = d.table_entry.clone().unwrap_or_default();
            let tables: Vec<u32> = if te.table_id == 0 {
                s.direct_counters.values().copied().collect()
            } else {
                let t = table(s, te.table_id)?;
                if t.direct_counter.is_none() {
                    return Err(P4Error::invalid(format!(
                        "table `{}` has no direct counter",
                        t.name
                    )));
                }
                if te.is_default_action {
                    cells::default_entry_only(t, &te)?;
                    return Ok(vec![Query::DefaultCounter { table: t.id }]);
                }
                vec![t.id]
            };
            tables
                .into_iter()
                .map(|id| {
                    let t = table(s, id)?;
                    Ok(Query::DirectCounter {
                        table: id,
                        key: table_filter(t, &te)?,
                    })
                })
                .collect()
        }
        Some(E::RegisterEntry(r)) => indexed_query(
            &s.registers,
            r.register_id,
            &r.index,
            "register",
            |register, index| Query::Register { register, index },
        ),
        Some(E::ActionProfileMember(m)) => {
            let ids: Vec<u32> = match m.action_profile_id {
                0 => s.profiles.keys().copied().collect(),
                id => vec![profile(s, id)?.id],
            };
            Ok(ids
                .into_iter()
                .map(|profile| Query::Members {
                    profile,
                    member: (m.member_id != 0).then_some(m.member_id),
                })
                .collect())
        }
        Some(E::ActionProfileGroup(g)) => {
            let ids: Vec<u32> = match g.action_profile_id {
                0 => s
                    .profiles
                    .values()
                    .filter(|p| p.with_selector)
                    .map(|p| p.id)
                    .collect(),
                id => vec![profile(s, id)?.id],
            };
            Ok(ids
                .into_iter()
                .map(|profile| Query::Groups {
                    profile,
                    group: (g.group_id != 0).then_some(g.group_id),
                })
                .collect())
        }
        Some(E::MeterEntry(m)) => cells::meter_query(s, m),
        Some(E::DirectMeterEntry(m)) => cells::direct_meter_query(s, m),
        Some(E::ValueSetEntry(v)) => Ok(match v.value_set_id {
            0 => s
                .value_sets
                .keys()
                .map(|&set| Query::ValueSet { set })
                .collect(),
            id => vec![Query::ValueSet {
                set: value_set(s, id)?.id,
            }],
        }),
        Some(E::PacketReplicationEngineEntry(p)) => match &p.r#type {
            Some(T::MulticastGroupEntry(g)) => Ok(vec![Query::McGroups {
                mgid: match g.multicast_group_id {
                    0 => None,
                    n => Some(u16::try_from(n).map_err(|_| {
                        P4Error::invalid(format!("multicast group id {n} is above 65535"))
                    })?),
                },
            }]),
            Some(T::CloneSessionEntry(c)) => Ok(vec![Query::CloneSessions {
                id: match c.session_id {
                    0 => None,
                    n => Some(u16::try_from(n).map_err(|_| {
                        P4Error::invalid(format!("clone session id {n} is too large"))
                    })?),
                },
            }]),
            None => Err(P4Error::invalid(
                "packet replication engine entry without a type",
            )),
        },
        Some(_) => Err(P4Error::unimplemented(
            "this entity type is not served over P4Runtime yet (see docs/p4runtime.md)",
        )),
        None => Err(P4Error::invalid("read of an empty entity")),
    }
}
