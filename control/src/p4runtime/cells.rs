//! Counter and meter cells over P4Runtime: counter values written (`CounterEntry` and
//! `DirectCounterEntry` MODIFY, one cell or every cell of a counter), meter configurations
//! written, reset to unconfigured (MODIFY without a config) and read back (`MeterEntry`,
//! `DirectMeterEntry`). A written counter value lands on the first pipe that runs the counter
//! and zeroes the others, so reads, which sum over the pipes, give back what was written.

use pipeline::api::cells::Cell;
use pipeline::api::PipeSel;
use pipeline::externs::meter::MeterConfig;
use pipeline::switch::Switch;

use super::codec::P4Error;
use super::device::{entity, entries_of, refs, table_entity, Op, Query};
use super::proto::p4::v1 as p4v1;
use super::request::{entry_key, index_of, indexed_query, table, table_filter};
use super::schema::{Schema, TableInfo};

use p4v1::entity::Entity as E;
use p4v1::update::Type as U;

fn meter_config(c: Option<&p4v1::MeterConfig>) -> Result<Option<MeterConfig>, P4Error> {
    let Some(c) = c else {
        return Ok(None);
    };
    let u = |v: i64, what: &str| {
        u64::try_from(v).map_err(|_| P4Error::invalid(format!("meter {what} {v} is negative")))
    };
    let cfg = MeterConfig {
        cir: u(c.cir, "cir")?,
        cbs: u(c.cburst, "cburst")?,
        pir: u(c.pir, "pir")?,
        pbs: u(c.pburst, "pburst")?,
    };
    if cfg.pir < cfg.cir {
        return Err(P4Error::invalid(format!(
            "meter pir {} is below cir {}",
            cfg.pir, cfg.cir
        )));
    }
    Ok(Some(cfg))
}

fn only_modify(kind: U, what: &str) -> Result<(), P4Error> {
    if kind != U::Modify {
        return Err(P4Error::invalid(format!(
            "{what}: only MODIFY applies (it exists as long as the program), not {}",
            kind.as_str_name()
        )));
    }
    Ok(())
}

/// A table with a direct resource of the given kind (`direct_of` maps resource → table).
fn direct_table<'a>(
    s: &'a Schema,
    id: u32,
    direct_of: impl Fn(&Schema) -> Vec<u32>,
    what: &str,
) -> Result<&'a TableInfo, P4Error> {
    let t = table(s, id)?;
    if !direct_of(s).contains(&t.id) {
        return Err(P4Error::invalid(format!(
            "table `{}` has no {what}",
            t.name
        )));
    }
    Ok(t)
}

fn direct_meter_tables(s: &Schema) -> Vec<u32> {
    s.direct_meters.values().copied().collect()
}

fn direct_counter_tables(s: &Schema) -> Vec<u32> {
    s.direct_counters.values().copied().collect()
}

pub fn meter_op(s: &Schema, kind: U, m: &p4v1::MeterEntry) -> Result<Op, P4Error> {
    let info = s
        .meters
        .get(&m.meter_id)
        .ok_or_else(|| P4Error::not_found(format!("no meter with id {:#x}", m.meter_id)))?;
    only_modify(kind, &format!("meter `{}`", info.name))?;
    let indexes = match index_of(&m.index, info.size, &info.name)? {
        Some(i) => i..i + 1,
        None => 0..info.size,
    };
    Ok(Op::MeterSet {
        name: info.name.clone(),
        indexes,
        cfg: meter_config(m.config.as_ref())?,
    })
}

pub fn direct_meter_op(s: &Schema, kind: U, m: &p4v1::DirectMeterEntry) -> Result<Op, P4Error> {
    only_modify(kind, "direct meter")?;
    let e = m
        .table_entry
        .as_ref()
        .ok_or_else(|| P4Error::invalid("direct meter entry without a table entry"))?;
    let t = direct_table(s, e.table_id, direct_meter_tables, "direct meter")?;
    if e.is_default_action {
        return Err(P4Error::new(
            tonic::Code::Unimplemented,
            format!(
                "table `{}`: pisa's default entry has no direct meter cell (a miss meters \
                 nothing: every packet GREEN)",
                t.name
            ),
        ));
    }
    let (keys, priority) = entry_key(t, e)?;
    Ok(Op::DirectMeterSet {
        table: t.name.clone(),
        keys,
        priority,
        cfg: meter_config(m.config.as_ref())?,
    })
}

fn counts(d: Option<&p4v1::CounterData>) -> Result<(u64, u64), P4Error> {
    let d = d.ok_or_else(|| P4Error::invalid("a counter write without data"))?;
    let u = |v: i64, what: &str| {
        u64::try_from(v).map_err(|_| P4Error::invalid(format!("counter {what} {v} is negative")))
    };
    Ok((
        u(d.packet_count, "packet_count")?,
        u(d.byte_count, "byte_count")?,
    ))
}

pub fn counter_op(s: &Schema, kind: U, c: &p4v1::CounterEntry) -> Result<Op, P4Error> {
    let info = s
        .counters
        .get(&c.counter_id)
        .ok_or_else(|| P4Error::not_found(format!("no counter with id {:#x}", c.counter_id)))?;
    only_modify(kind, &format!("counter `{}`", info.name))?;
    let indexes = match index_of(&c.index, info.size, &info.name)? {
        Some(i) => i..i + 1,
        None => 0..info.size,
    };
    let (packets, bytes) = counts(c.data.as_ref())?;
    Ok(Op::CounterWrite {
        name: info.name.clone(),
        indexes,
        packets,
        bytes,
    })
}

pub fn direct_counter_op(s: &Schema, kind: U, c: &p4v1::DirectCounterEntry) -> Result<Op, P4Error> {
    only_modify(kind, "direct counter")?;
    let e = c
        .table_entry
        .as_ref()
        .ok_or_else(|| P4Error::invalid("direct counter entry without a table entry"))?;
    let t = direct_table(s, e.table_id, direct_counter_tables, "direct counter")?;
    let (packets, bytes) = counts(c.data.as_ref())?;
    if e.is_default_action {
        default_entry_only(t, e)?;
        return Ok(Op::DefaultCounterWrite {
            table: t.name.clone(),
            packets,
            bytes,
        });
    }
    let (keys, priority) = entry_key(t, e)?;
    Ok(Op::DirectCounterWrite {
        table: t.name.clone(),
        keys,
        priority,
        packets,
        bytes,
    })
}

/// The default entry (`is_default_action`) of a direct resource request names no match and
/// no priority.
pub fn default_entry_only(t: &TableInfo, e: &p4v1::TableEntry) -> Result<(), P4Error> {
    if !e.r#match.is_empty() || e.priority != 0 {
        return Err(P4Error::invalid(format!(
            "table `{}`: the default entry has no match and no priority",
            t.name
        )));
    }
    Ok(())
}

/// Writes a counter cell: the value on the first pipe running it, zero on the others.
pub fn counter_write(
    sw: &mut Switch,
    cell: Cell<'_>,
    packets: u64,
    bytes: u64,
) -> Result<(), P4Error> {
    let first = match cell {
        Cell::Index { name, index } => sw.counter_read(PipeSel::All, name, index)?,
        Cell::Direct {
            table,
            keys,
            priority,
        } => sw.direct_counter_read(PipeSel::All, table, keys, priority)?,
        Cell::Default { .. } => sw.counter_cell_read(PipeSel::All, cell)?,
    }
    .iter()
    .map(|c| c.pipe)
    .min();
    sw.counter_write(PipeSel::All, cell, 0, 0)?;
    if let Some(p) = first {
        sw.counter_write(PipeSel::Pipe(p), cell, packets, bytes)?;
    }
    Ok(())
}

/// Configures or (with `None`) resets a meter cell on every pipe.
pub fn meter_write(
    sw: &mut Switch,
    cell: Cell<'_>,
    cfg: Option<MeterConfig>,
) -> Result<(), P4Error> {
    match (cfg, cell) {
        (None, _) => sw.meter_reset(PipeSel::All, cell)?,
        (Some(c), Cell::Index { name, index }) => sw.meter_set(PipeSel::All, name, index, c)?,
        (
            Some(c),
            Cell::Direct {
                table,
                keys,
                priority,
            },
        ) => sw.direct_meter_set(PipeSel::All, table, keys, priority, c)?,
        (Some(_), Cell::Default { table }) => {
            return Err(pipeline::api::ApiError::NoDefaultCell {
                table: table.to_string(),
            }
            .into())
        }
    }
    Ok(())
}

/// Reads of meter configurations (meter id 0: every meter; no index: every cell).
pub fn meter_query(s: &Schema, m: &p4v1::MeterEntry) -> Result<Vec<Query>, P4Error> {
    indexed_query(&s.meters, m.meter_id, &m.index, "meter", |meter, index| {
        Query::Meter { meter, index }
    })
}

/// Reads of direct meter configurations (table id 0: every table with a direct meter).
pub fn direct_meter_query(s: &Schema, m: &p4v1::DirectMeterEntry) -> Result<Vec<Query>, P4Error> {
    let te = m.table_entry.clone().unwrap_or_default();
    let tables = if te.table_id == 0 {
        direct_meter_tables(s)
    } else {
        vec![direct_table(s, te.table_id, direct_meter_tables, "direct meter")?.id]
    };
    tables
        .into_iter()
        .map(|id| {
            Ok(Query::DirectMeter {
                table: id,
                key: table_filter(table(s, id)?, &te)?,
            })
        })
        .collect()
}

fn config_of(cfg: Option<MeterConfig>) -> Option<p4v1::MeterConfig> {
    cfg.map(|c| p4v1::MeterConfig {
        cir: c.cir as i64,
        cburst: c.cbs as i64,
        pir: c.pir as i64,
        pburst: c.pbs as i64,
    })
}

/// The first pipe's configuration of a cell (writes go to every pipe).
fn first_config(sw: &Switch, cell: Cell<'_>) -> Result<Option<MeterConfig>, P4Error> {
    Ok(sw
        .meter_config(PipeSel::All, cell)?
        .first()
        .and_then(|c| c.1))
}

/// The direct meter configuration of table entry `e` (first pipe).
pub(crate) fn direct_meter_config(
    sw: &Switch,
    t: &TableInfo,
    e: &pipeline::api::TableEntry,
) -> Result<Option<p4v1::MeterConfig>, P4Error> {
    let keys = refs(&e.keys);
    let cell = Cell::Direct {
        table: &t.name,
        keys: &keys,
        priority: e.priority,
    };
    Ok(config_of(first_config(sw, cell)?))
}

/// Answers [`Query::Meter`] and [`Query::DirectMeter`].
pub fn read_meters(sw: &Switch, s: &Schema, q: &Query) -> Result<Vec<p4v1::Entity>, P4Error> {
    let mut out = Vec::new();
    match q {
        Query::Meter { meter, index } => {
            let m = &s.meters[meter];
            let range = match index {
                Some(i) => *i..*i + 1,
                None => 0..m.size,
            };
            for i in range {
                let cell = Cell::Index {
                    name: &m.name,
                    index: i,
                };
                out.push(entity(E::MeterEntry(p4v1::MeterEntry {
                    meter_id: m.id,
                    index: Some(p4v1::Index {
                        index: i64::from(i),
                    }),
                    config: config_of(first_config(sw, cell)?),
                })));
            }
        }
        Query::DirectMeter { table: id, key } => {
            let t = &s.tables[id];
            for e in entries_of(sw, t, key)? {
                let keys = refs(&e.keys);
                let cell = Cell::Direct {
                    table: &t.name,
                    keys: &keys,
                    priority: e.priority,
                };
                out.push(entity(E::DirectMeterEntry(p4v1::DirectMeterEntry {
                    table_entry: Some(table_entity(s, t, &e)?),
                    config: config_of(first_config(sw, cell)?),
                })));
            }
        }
        _ => {}
    }
    Ok(out)
}
