//! Writing a [`TablesFile`] to a switch through the runtime API, in dependency order: port
//! queues, the multicast engine (LAGs, nodes, groups, pruning), mirror sessions, tables
//! (clear, default action, entries), parser value sets, registers. The first refusal stops the run and names the
//! file position and entry together with the API's own error.

use pipeline::api::{ApiError, PipeSel};
use pipeline::externs::meter::MeterConfig;
use pipeline::switch::Switch;
use pipeline::table::profile::EntryRef;
use pipeline::tm::mirror::{self, MirrorDest};
use pipeline::tm::queue::EcnConfig;

use super::model::{At, MirrorDirection, PortSettings, TablesFile, ValueSetItem};
use super::TablesFileError;
use crate::resolve::{self, ResolveError};
use crate::value;

/// What a table file did to the switch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplySummary {
    pub entries: usize,
    pub defaults: usize,
    pub tables_cleared: usize,
    pub registers: usize,
    pub mirror_sessions: usize,
    pub mc_nodes: usize,
    pub mc_groups: usize,
    pub prunes: usize,
    pub lags: usize,
    pub ports: usize,
    pub members: usize,
    pub groups: usize,
    pub value_set_entries: usize,
    pub filters: usize,
    pub meters: usize,
}

/// The underlying reason an item of the file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error("{0}")]
    Invalid(String),
}

fn at<T>(item: &At<T>, context: String, source: impl Into<ApplyError>) -> TablesFileError {
    TablesFileError::Item {
        line: item.line,
        column: item.column,
        context,
        error: Box::new(source.into()),
    }
}

/// Programs the switch with everything in `file`.
pub fn apply(sw: &mut Switch, file: &TablesFile) -> Result<ApplySummary, TablesFileError> {
    let mut sum = ApplySummary::default();
    for (i, p) in file.ports.iter().enumerate() {
        apply_port(sw, &p.item)
            .map_err(|e| at(p, format!("ports[{i}] (port {})", p.item.port), e))?;
        sum.ports += 1;
    }
    let mc = &file.multicast;
    for (i, l) in mc.lags.iter().enumerate() {
        sw.mc_lag_set(l.item.id, &l.item.ports)
            .map_err(|e| at(l, format!("multicast.lags[{i}] (lag {})", l.item.id), e))?;
        sum.lags += 1;
    }
    for (i, n) in mc.nodes.iter().enumerate() {
        sw.mc_node_create(n.item.id, n.item.rid, &n.item.ports, &n.item.lags)
            .map_err(|e| at(n, format!("multicast.nodes[{i}] (node {})", n.item.id), e))?;
        sum.mc_nodes += 1;
    }
    for (i, g) in mc.groups.iter().enumerate() {
        let ctx = || format!("multicast.groups[{i}] (mgid {})", g.item.mgid);
        if let Some(x) = &g.item.xids {
            if x.len() != g.item.nodes.len() {
                return Err(at(
                    g,
                    ctx(),
                    ApplyError::Invalid(format!(
                        "{} nodes but {} xids: give one L1 exclusion id per node",
                        g.item.nodes.len(),
                        x.len()
                    )),
                ));
            }
        }
        sw.mc_group_create(g.item.mgid)
            .map_err(|e| at(g, ctx(), e))?;
        for (k, node) in g.item.nodes.iter().enumerate() {
            let xid = g.item.xids.as_ref().and_then(|x| x.get(k).copied());
            sw.mc_group_add_node(g.item.mgid, *node, xid)
                .map_err(|e| at(g, format!("{} node {node}", ctx()), e))?;
        }
        sum.mc_groups += 1;
    }
    for (i, p) in mc.prune.iter().enumerate() {
        sw.mc_prune_set(p.item.xid, &p.item.ports)
            .map_err(|e| at(p, format!("multicast.prune[{i}] (xid {})", p.item.xid), e))?;
        sum.prunes += 1;
    }
    for (i, m) in file.mirror.iter().enumerate() {
        let s = &m.item;
        let ctx = format!("mirror[{i}] (session {})", s.session);
        let dest = match (s.port, s.mgid) {
            (Some(p), None) => MirrorDest::Port(p),
            (None, Some(g)) => MirrorDest::Multicast {
                mcast_grp_a: Some(g),
                mcast_grp_b: None,
                level1_exclusion_id: 0,
                level2_exclusion_id: 0,
                rid: 0,
                level1_mcast_hash: s.level1_mcast_hash,
                level2_mcast_hash: s.level2_mcast_hash,
            },
            _ => {
                return Err(at(
                    m,
                    ctx,
                    ApplyError::Invalid("give exactly one of `port` and `mgid`".into()),
                ))
            }
        };
        let session = mirror::MirrorSession {
            direction: match s.direction {
                MirrorDirection::Ingress => mirror::MirrorDirection::Ingress,
                MirrorDirection::Egress => mirror::MirrorDirection::Egress,
                MirrorDirection::Both => mirror::MirrorDirection::Both,
            },
            dest,
            max_len: s.max_len,
            enabled: true,
        };
        sw.mirror_session_set(s.session, session)
            .map_err(|e| at(m, ctx, e))?;
        sum.mirror_sessions += 1;
    }
    let prog = sw.program().clone();
    for (pi, sec) in file.action_profiles.iter().enumerate() {
        apply_profile(sw, &prog, pi, sec, &mut sum)?;
    }
    for (ti, sec) in file.tables.iter().enumerate() {
        let tname = &sec.table.item;
        let ctx = |what: String| {
            format!("tables[{ti}] `{tname}` {what}")
                .trim_end()
                .to_string()
        };
        // Resolve the name even for a section with nothing in it: a typo must not pass.
        let full = resolve::find_table(&prog, tname)
            .map(|r| {
                prog.pipelines[r.pipeline].tables[r.table.index()]
                    .name
                    .clone()
            })
            .map_err(|e| at(&sec.table, ctx("".into()), e))?;
        if sec.clear {
            sw.table_clear(PipeSel::All, &full)
                .map_err(|e| at(&sec.table, ctx("clear".into()), e))?;
            sum.tables_cleared += 1;
        }
        if let Some(d) = &sec.default {
            let c = || ctx(format!("default action `{}`", d.item.action));
            let params = d.item.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
            let def = resolve::resolve_default(&prog, tname, &d.item.action, params)
                .map_err(|e| at(d, c(), e))?;
            let params: Vec<(&str, u128)> =
                def.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            sw.table_set_default(PipeSel::All, &def.table, &def.action, &params)
                .map_err(|e| at(d, c(), e))?;
            sum.defaults += 1;
        }
        for (ei, e) in sec.entries.iter().enumerate() {
            let c = || ctx(format!("entry {ei}"));
            add_entry(sw, &prog, tname, &e.item).map_err(|err| at(e, c(), err))?;
            sum.entries += 1;
        }
    }
    for (i, f) in file.filters.iter().enumerate() {
        let w = &f.item;
        let what = match (&w.filter, &w.table) {
            (Some(n), _) => format!("`{n}`[{}]", w.index.unwrap_or(0)),
            (None, Some(t)) => format!("of table `{t}`"),
            (None, None) => String::new(),
        };
        write_filter(sw, w).map_err(|e| at(f, format!("filters[{i}] {what}"), e))?;
        sum.filters += 1;
    }
    for (i, m) in file.meters.iter().enumerate() {
        let w = &m.item;
        let ctx = match (&w.meter, &w.table, w.index) {
            (Some(n), _, Some(x)) => format!("meters[{i}] (`{n}`[{x}])"),
            (Some(n), _, None) => format!("meters[{i}] (`{n}`)"),
            (None, Some(t), _) => format!("meters[{i}] (of table `{t}`)"),
            (None, None, _) => format!("meters[{i}]"),
        };
        write_meter(sw, w).map_err(|e| at(m, ctx, e))?;
        sum.meters += 1;
    }
    for sec in &file.value_sets {
        sum.value_set_entries += apply_value_set(sw, sec)?;
    }
    for (i, r) in file.registers.iter().enumerate() {
        let w = &r.item;
        let ctx = format!("registers[{i}] (`{}`[{}])", w.register, w.index);
        write_register(sw, w).map_err(|e| at(r, ctx, e))?;
        sum.registers += 1;
    }
    Ok(sum)
}

/// One entry: an action with its parameters, or a member or group of the table's profile.
fn add_entry(
    sw: &mut Switch,
    prog: &pipeline::ir::Program,
    tname: &str,
    e: &super::model::Entry,
) -> Result<(), ApplyError> {
    let keys = e.key.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let target = match (&e.action, e.member, e.group) {
        (Some(_), None, None) => None,
        (None, Some(m), None) => Some(EntryRef::Member(m)),
        (None, None, Some(g)) => Some(EntryRef::Group(g)),
        _ => {
            return Err(ApplyError::Invalid(
                "give exactly one of `action`, `member` and `group`".into(),
            ))
        }
    };
    if let Some(x) = target {
        if !e.params.is_empty() {
            return Err(ApplyError::Invalid(
                "`params` belong to the member, not to an entry that points at one".into(),
            ));
        }
        let (table, named, prio) = resolve::resolve_ref_entry(prog, tname, keys, e.priority)?;
        let k: Vec<(&str, _)> = named.iter().map(|(n, m)| (n.as_str(), *m)).collect();
        sw.table_add_ref(PipeSel::All, &table, &k, prio, x)?;
        return set_ttl(sw, &table, &k, prio, e.ttl_ms);
    }
    let action = e.action.as_deref().unwrap_or_default();
    let params = e.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let (table, entry) = resolve::resolve_entry(prog, tname, keys, e.priority, action, params)?;
    sw.table_add_entry(PipeSel::All, &table, &entry)?;
    let k: Vec<(&str, _)> = entry.keys.iter().map(|(n, m)| (n.as_str(), *m)).collect();
    set_ttl(sw, &table, &k, entry.priority, e.ttl_ms)
}

/// An entry's `ttl_ms` (the table must have idle timeouts).
pub(crate) fn set_ttl(
    sw: &mut Switch,
    table: &str,
    keys: &[(&str, pipeline::ir::KeyMatch)],
    priority: Option<u32>,
    ttl_ms: Option<u64>,
) -> Result<(), ApplyError> {
    let Some(ms) = ttl_ms else {
        return Ok(());
    };
    let ns = ms.checked_mul(1_000_000).ok_or_else(|| {
        ApplyError::Invalid(format!(
            "`ttl_ms` {ms} is too large (at most {} ms)",
            u64::MAX / 1_000_000
        ))
    })?;
    sw.table_entry_ttl(PipeSel::All, table, keys, priority, ns)?;
    Ok(())
}

/// The members, then the groups, of one profile section.
fn apply_profile(
    sw: &mut Switch,
    prog: &pipeline::ir::Program,
    pi: usize,
    sec: &super::model::ProfileSection,
    sum: &mut ApplySummary,
) -> Result<(), TablesFileError> {
    let pname = &sec.profile.item;
    let ctx = |what: String| format!("action_profiles[{pi}] `{pname}` {what}");
    let full = resolve::find_profile(prog, pname)
        .map(|r| {
            prog.pipelines[r.pipeline].action_profiles[r.index]
                .name
                .clone()
        })
        .map_err(|e| at(&sec.profile, ctx(String::new()).trim_end().to_string(), e))?;
    for m in &sec.members {
        let c = || ctx(format!("member {}", m.item.id));
        let params = m.item.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let (_, action, named) = resolve::resolve_member(prog, &full, &m.item.action, params)
            .map_err(|e| at(m, c(), e))?;
        let p: Vec<(&str, u128)> = named.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        sw.profile_member_set(PipeSel::All, &full, m.item.id, &action, &p)
            .map_err(|e| at(m, c(), e))?;
        sum.members += 1;
    }
    for g in &sec.groups {
        sw.profile_group_set(PipeSel::All, &full, g.item.id, &g.item.members)
            .map_err(|e| at(g, ctx(format!("group {}", g.item.id)), e))?;
        sum.groups += 1;
    }
    Ok(())
}

/// One `value_sets:` section: the set optionally cleared, then its entries added.
fn apply_value_set(
    sw: &mut Switch,
    sec: &super::model::ValueSetSection,
) -> Result<usize, TablesFileError> {
    let prog = sw.program().clone();
    let name = &sec.value_set.item;
    let ctx = |what: String| format!("value_sets `{name}` {what}");
    if sec.clear {
        let full = resolve::find_value_set(&prog, name)
            .map(|r| prog.pipelines[r.pipeline].value_sets[r.index].name.clone())
            .map_err(|e| at(&sec.value_set, ctx("clear".into()), e))?;
        sw.value_set_clear(PipeSel::All, &full)
            .map_err(|e| at(&sec.value_set, ctx("clear".into()), e))?;
    }
    for (ei, e) in sec.entries.iter().enumerate() {
        let fields: Vec<(Option<&str>, &str)> = match &e.item {
            ValueSetItem::One(t) => vec![(None, t.as_str())],
            ValueSetItem::Fields(m) => m
                .iter()
                .map(|(k, v)| (Some(k.as_str()), v.as_str()))
                .collect(),
        };
        let c = || ctx(format!("entry {ei}"));
        let (full, entry) =
            resolve::resolve_value_set_entry(&prog, name, fields).map_err(|err| at(e, c(), err))?;
        sw.value_set_add(PipeSel::All, &full, &entry)
            .map_err(|err| at(e, c(), err))?;
    }
    Ok(sec.entries.len())
}

/// One `filters:` item: the spec built for the filter's kind, then written by index or by
/// the entry of a direct filter's table.
fn write_filter(sw: &mut Switch, w: &super::model::FilterWrite) -> Result<(), ApplyError> {
    use pipeline::externs::filter::{FilterSpec, LpfKind, LpfSpec, WredSpec};
    use pipeline::ir::FilterKind;
    let prog = sw.program().clone();
    let kind = match (&w.filter, &w.table) {
        (Some(n), None) => {
            let r = resolve::find_filter(&prog, n)?;
            prog.pipelines[r.pipeline].filters[r.index].kind
        }
        (None, Some(t)) => {
            let r = resolve::find_table(&prog, t)?;
            let f = prog.pipelines[r.pipeline]
                .filters
                .iter()
                .find(|f| f.direct_table == Some(r.table))
                .ok_or_else(|| ApplyError::Invalid(format!("table `{t}` has no direct filter")))?;
            f.kind
        }
        _ => {
            return Err(ApplyError::Invalid(
                "give `filter` (and `index`) or `table` (and `key`), not both".into(),
            ))
        }
    };
    let spec = match kind {
        FilterKind::Lpf => FilterSpec::Lpf(LpfSpec {
            kind: match w.lpf_type {
                Some(super::model::LpfType::Rate) => LpfKind::Rate,
                _ => LpfKind::Sample,
            },
            // One constant alone is bf-rt's single time constant: both.
            gain_ns: w.gain_ns.or(w.decay_ns).unwrap_or(0),
            decay_ns: w.decay_ns.or(w.gain_ns).unwrap_or(0),
            scale_down: w.scale_down.unwrap_or(0),
        }),
        FilterKind::Wred { .. } => {
            // The spec is checked where every spec enters (`FilterSpec::validate`).
            let p = w.max_probability.unwrap_or(1.0);
            FilterSpec::Wred(WredSpec {
                time_constant_ns: w.time_constant_ns.unwrap_or(0),
                min_thresh: w.min_thresh.unwrap_or(0),
                max_thresh: w.max_thresh.unwrap_or(u32::MAX),
                max_probability: p,
            })
        }
    };
    match (&w.filter, &w.table) {
        (Some(n), _) => {
            let r = resolve::find_filter(&prog, n)?;
            let full = &prog.pipelines[r.pipeline].filters[r.index].name;
            sw.filter_set(PipeSel::All, full, w.index.unwrap_or(0), spec)?;
        }
        (None, Some(t)) => {
            let keys = w.key.iter().map(|(k, v)| (k.as_str(), v.as_str()));
            let (table, named, priority) = resolve::resolve_ref_entry(&prog, t, keys, w.priority)?;
            let refs: Vec<(&str, pipeline::ir::KeyMatch)> =
                named.iter().map(|(k, m)| (k.as_str(), *m)).collect();
            sw.direct_filter_set(PipeSel::All, &table, &refs, priority, spec)?;
        }
        (None, None) => {}
    }
    Ok(())
}

/// A `meters:` item: the meter's byte count adjustment and/or one cell's rates.
fn write_meter(sw: &mut Switch, w: &super::model::MeterSettings) -> Result<(), ApplyError> {
    let invalid = |m: &str| Err(ApplyError::Invalid(m.into()));
    let name = match (&w.meter, &w.table) {
        (Some(n), None) => n,
        (None, Some(t)) => t,
        _ => return invalid("give `meter` or `table`, one of them"),
    };
    let rates = match (w.cir, w.pir, w.cbs, w.pbs) {
        (Some(cir), Some(pir), Some(cbs), Some(pbs)) => Some(MeterConfig { cir, pir, cbs, pbs }),
        (None, None, None, None) => None,
        _ => return invalid("give all four of `cir`, `pir`, `cbs` and `pbs`, or none"),
    };
    let cell_named = w.index.is_some() || !w.key.is_empty() || w.priority.is_some();
    if rates.is_none() && cell_named {
        return invalid(
            "`index`, `key` and `priority` name the cell whose rates are set: give the rates too",
        );
    }
    if w.byte_count_adjust.is_none() && rates.is_none() {
        return invalid("give `byte_count_adjust`, or the rates `cir`, `pir`, `cbs`, `pbs`");
    }
    let pipes = w.pipe.map_or(PipeSel::All, PipeSel::Pipe);
    if let Some(bytes) = w.byte_count_adjust {
        sw.meter_byte_adjust_set(pipes, name, bytes)?;
    }
    let Some(cfg) = rates else { return Ok(()) };
    if w.meter.is_some() {
        if !w.key.is_empty() || w.priority.is_some() {
            return invalid("a meter named by `meter` takes an `index`; name a direct meter's cell by `table` and `key`");
        }
        sw.meter_set(pipes, name, w.index.unwrap_or(0), cfg)?;
    } else if w.index.is_some() {
        return invalid("a direct meter's cell is named by its table's `key`, not an `index`");
    } else {
        let prog = sw.program().clone();
        let keys = w.key.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let (table, named, priority) = resolve::resolve_ref_entry(&prog, name, keys, w.priority)?;
        let refs: Vec<(&str, pipeline::ir::KeyMatch)> =
            named.iter().map(|(k, m)| (k.as_str(), *m)).collect();
        sw.direct_meter_set(pipes, &table, &refs, priority, cfg)?;
    }
    Ok(())
}

fn write_register(sw: &mut Switch, w: &super::model::RegisterWrite) -> Result<(), ApplyError> {
    let prog = sw.program().clone();
    let r = resolve::find_register(&prog, &w.register)?;
    let reg = &prog.pipelines[r.pipeline].registers[r.index];
    let lo_text = match (&w.value, &w.lo) {
        (Some(v), None) | (None, Some(v)) => v,
        (Some(_), Some(_)) => {
            return Err(ApplyError::Invalid("give `value` or `lo`, not both".into()))
        }
        (None, None) => {
            return Err(ApplyError::Invalid(
                "give `value` (or `lo` and `hi`)".into(),
            ))
        }
    };
    let read = |text: &super::model::Text, word: &str| {
        value::parse_value(text.as_str(), reg.width).map_err(|source| ResolveError::Value {
            what: format!("register `{}` word {word} ({} bits)", reg.name, reg.width),
            source,
        })
    };
    let lo = read(lo_text, "lo")?;
    let hi = match &w.hi {
        Some(t) => Some(read(t, "hi")?),
        None => None,
    };
    let pipes = w.pipe.map_or(PipeSel::All, PipeSel::Pipe);
    sw.register_write(pipes, &reg.name, w.index, lo, hi)?;
    Ok(())
}

/// A port's `port_metadata`: the chip's phase-0 word (8 bytes on Tofino 1, 16 on Tofino 2,
/// bf-p4c `PardeSpec::bytePhase0Size()`), most significant byte first; a value wider than the
/// word is refused.
fn port_metadata(sw: &mut Switch, port: u16, md: u128) -> Result<(), ApplyError> {
    let n = pipeline::switch::phase0_bytes(sw.program().target);
    let bytes = md.to_be_bytes();
    let (high, word) = bytes.split_at(bytes.len() - n);
    if high.iter().any(|b| *b != 0) {
        return Err(ApplyError::Invalid(format!(
            "port_metadata {md:#x} is wider than the chip's {}-bit phase-0 word",
            n * 8
        )));
    }
    Ok(sw.port_metadata_set(port, word)?)
}

fn apply_port(sw: &mut Switch, p: &PortSettings) -> Result<(), ApplyError> {
    let mut q = sw.config().queue_config(p.port);
    if let Some(r) = p.rate_bps {
        q.rate_bps = Some(r);
    }
    if let Some(c) = p.queue_bytes {
        q.capacity_bytes = c;
    }
    match (p.ecn_kmin_bytes, p.ecn_kmax_bytes, p.ecn_pmax) {
        (None, None, None) => {}
        (Some(kmin), Some(kmax), pmax) => {
            q.ecn = Some(EcnConfig {
                kmin_bytes: kmin,
                kmax_bytes: kmax,
                pmax: pmax.unwrap_or(1.0),
            })
        }
        _ => {
            return Err(ApplyError::Invalid(
                "ECN marking needs both `ecn_kmin_bytes` and `ecn_kmax_bytes`".into(),
            ))
        }
    }
    sw.port_queue_set(p.port, q)?;
    if let Some(md) = p.port_metadata {
        port_metadata(sw, p.port, md)?;
    }
    match (p.queues, &p.queue_map) {
        (Some(count), map) => {
            sw.port_queue_map_set(p.port, count, map.as_deref().unwrap_or(&[]))?
        }
        (None, Some(_)) => {
            return Err(ApplyError::Invalid(
                "a port's `queue_map` needs its `queues` (the queue count)".into(),
            ))
        }
        (None, None) => {}
    }
    Ok(())
}
