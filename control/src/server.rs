//! The control socket of a running switch (`pisa run --ctl PATH`, every lab switch): a Unix
//! socket server answering JSON-line requests ([`crate::ctl::Request`]) on a
//! [`SwitchHandle`]. `pisa ctl` is its client.
//!
//! Protocol: JSON lines. The client writes one JSON object per line; the server answers each
//! with one JSON object on one line, in order. Every request has an `op`:
//!
//! | op | fields | answer (besides `"ok": true`) |
//! |---|---|---|
//! | `stats` | | `ports`: per port `port`, `name`, `rx`, `rx_bytes`, `tx`, `tx_bytes`, `drops`, `faults`; `processed`, `no_port`, `switch_drops` (by reason), `threads`: per pipeline thread `pipe` (null: the single thread), `frames`, `batches`, `copies_in`, `copies_out`, `cross_full` |
//! | `counter_read` | `name`, `index`, `pipe`? | `cells`: `[{pipe, packets, bytes}]` |
//! | `register_read` | `name`, `index`, `pipe`? | `cells`: `[{pipe, lo, hi}]` (values as decimal strings) |
//! | `table_add` | `table`, `key` {field: value}, `priority`?, `action`, `params` {name: value}? | |
//! | `table_delete` | `table`, `key`, `priority`? | |
//! | `table_modify` | as `table_add` | changes the action and data of an existing entry |
//! | `table_list` | `table` | `table` (full name), `entries`: `[{key, priority, action, params}]`, `default`: `{action, params}`, `hits`, `misses` (summed over pipes) |
//! | `apply` | `yaml`: a table-state file's text (`crate::tables_file`: tables with `clear` and `default`, registers, mirror sessions, multicast nodes/groups/pruning/LAGs, port queues with ECN) | `applied`: counts per kind |
//! | `queue_get` | `port` | `enqueued`, `enqueued_bytes`, `dropped`, `dropped_bytes`, `marked`, `max_depth_bytes` (from the thread of the port's pipe) |
//! | `link_get` | `port` | `settings` (the link's config as JSON), `faults_tx`, `faults_rx` |
//! | `link_set` | `port`, `settings` (text like `rate=10G,delay=5us,loss=0.01,down`) | replaces the link's settings |
//! | `link_down` / `link_up` | `port` | |
//!
//! Values in `key` and `params` use the table-file syntax (`crate::value`): numbers, `0x..`,
//! MAC and IP addresses, `value/prefix`, `value &&& mask`, `lo..hi`; JSON numbers are accepted
//! too. A bad request gets `{"ok": false, "error": "..."}` naming what is wrong, and the
//! connection stays open. `apply` runs the file's sections in order and stops at the first
//! error, keeping what was applied before it (the error names the item), as at start-up.
//!
//! Limits: a request line is at most [`MAX_LINE`] bytes (1 MiB); a longer one is refused
//! with a `line too long` error as it passes the limit, nothing more of it is buffered, and
//! the connection is closed. At most [`MAX_CONNS`] (64) connections are served at once; one
//! more is answered with a `too many connections` error and closed. A connection that completes
//! no request line within [`IDLE_TIMEOUT`] (60 s; [`CtlServer::start_with`] sets another) of
//! opening or of its last answer is answered with an `idle timeout` error and closed, so that
//! neither idle clients nor clients trickling a byte now and then can hold every slot.
//!
//! Every request runs inside a `ctl` tracing span carrying its `op`; writes log what changed.
//!
//! With one thread per pipe (`pisa run --pipe-threads`, see [`dataplane::switch`]) writes go to every
//! pipe thread's switch instance and reads collect each pipe's cells from the thread that owns
//! the pipe, so answers look the same in both modes.

use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use dataplane::switch::{merge_cells, owns_pipe, Part, SwitchHandle};
use pipeline::api::PipeSel;
use serde_json::{json, Value as Json};

use crate::ctl::{texts, Request};

/// The control socket could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A file-system or socket call failed.
    #[error("{what} `{path}`: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Another live process serves this socket.
    #[error("control socket `{0}` is in use by another pisa")]
    InUse(PathBuf),
}

impl ServerError {
    fn io(what: &'static str, path: &Path, source: std::io::Error) -> ServerError {
        ServerError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// How long one request may wait for the pipeline thread.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest request line accepted (bytes, without the newline).
pub const MAX_LINE: usize = 1 << 20;

/// Most connections served at once (one thread each); a client beyond them is answered with
/// [`too_many_connections`] and closed.
pub const MAX_CONNS: usize = 64;

/// How long a connection may go without completing a request line (counted from its opening or
/// its last answer, whatever bytes of a line it sends meanwhile) before it is answered with
/// [`idle_timeout`] and closed. Partial lines do not restart it: 64 clients each sending a byte
/// every 30 s would otherwise hold every slot for ever.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

fn pipes(p: Option<u16>) -> PipeSel {
    p.map_or(PipeSel::All, PipeSel::Pipe)
}

/// Answers one request line.
pub fn handle_line(h: &SwitchHandle, line: &str) -> Json {
    let req = match Request::parse(line) {
        Ok(r) => r,
        Err(e) => return json!({"ok": false, "error": p4::diag::bounded(&e.to_string())}),
    };
    let op = req.op();
    let _span = tracing::info_span!("ctl", op).entered();
    let write = req.is_write();
    match handle(h, req, op) {
        Ok(mut v) => {
            if write {
                tracing::info!("done");
            }
            if let Json::Object(m) = &mut v {
                m.insert("ok".into(), Json::Bool(true));
            }
            v
        }
        Err(e) => {
            // A name or key quoted from the request is not echoed whole.
            let e = p4::diag::bounded(&e).into_owned();
            tracing::info!(error = %e, "refused");
            json!({"ok": false, "error": e})
        }
    }
}

/// An action's parameters as the table-file syntax writes them (widths from the program).
/// A listed entry and, in a table with idle timeouts, its TTL and latest hit (ns).
type ListedEntry = (Json, Option<(u64, u64)>);

/// An entry's TTL and latest hit over the pipes `owns` selects (bf-rt's `$ENTRY_TTL` and hit
/// state), for a table with idle timeouts.
fn entry_idle(
    sw: &pipeline::switch::Switch,
    owns: u8,
    table: &str,
    e: &pipeline::api::TableEntry,
) -> Option<(u64, u64)> {
    let keys: Vec<(&str, _)> = e.keys.iter().map(|(k, m)| (k.as_str(), *m)).collect();
    (0..sw.num_pipes())
        .filter(|&p| owns_pipe(owns, u32::from(p)))
        .filter_map(|p| {
            sw.table_entry_idle(PipeSel::Pipe(p), table, &keys, e.priority)
                .ok()
        })
        .reduce(|a, b| (a.0, a.1.max(b.1)))
}

fn params_json(
    pl: &pipeline::ir::Pipeline,
    action: &str,
    params: &[(String, pipeline::ir::Value)],
) -> Json {
    let decl = pl.actions.iter().find(|a| a.name == action);
    Json::Object(
        params
            .iter()
            .map(|(k, v)| {
                // A member or group id (`$member`, `$group`) is a 32-bit number.
                let width = decl
                    .and_then(|a| a.params.iter().find(|p| &p.name == k))
                    .map_or(if action.starts_with('$') { 32 } else { 128 }, |p| p.width);
                let text = crate::value::format_value(*v, width, k);
                (k.clone(), Json::String(text))
            })
            .collect(),
    )
}

fn handle(h: &SwitchHandle, req: Request, op: &'static str) -> Result<Json, String> {
    match req {
        Request::Stats {} => {
            let st = h.stats();
            let ports: Vec<Json> = st
                .ports
                .iter()
                .map(|p| {
                    json!({
                        "port": p.devport, "name": p.name,
                        "rx": p.port.rx_packets, "rx_bytes": p.port.rx_bytes,
                        "tx": p.port.tx_packets, "tx_bytes": p.port.tx_bytes,
                        "drops": p.total_drops(),
                        "ingress_channel_full": p.runtime.ingress_full,
                        "egress_channel_full": p.runtime.egress_full,
                        "faults_tx": faults(&p.faults_tx), "faults_rx": faults(&p.faults_rx),
                    })
                })
                .collect();
            let threads: Vec<Json> = st
                .threads
                .iter()
                .map(|t| {
                    json!({
                        "pipe": t.pipe, "frames": t.frames, "batches": t.batches,
                        "copies_in": t.copies_in, "copies_out": t.copies_out,
                        "cross_full": t.cross_full,
                    })
                })
                .collect();
            let parts = h
                .each(CALL_TIMEOUT, |sw, _| sw.stats().drops)
                .map_err(|e| e.to_string())?;
            let mut sum = [0u64; pipeline::switch::DropReason::COUNT];
            for d in parts {
                for (s, n) in sum.iter_mut().zip(d) {
                    *s += n;
                }
            }
            let drops: serde_json::Map<String, Json> = pipeline::switch::DropReason::ALL
                .iter()
                .filter(|r| sum[**r as usize] > 0)
                .map(|r| (r.name().to_string(), json!(sum[*r as usize])))
                .collect();
            Ok(json!({
                "ports": ports, "processed": st.processed, "no_port": st.no_port,
                "switch_drops": drops, "threads": threads,
            }))
        }
        Request::CounterRead { name, index, pipe } => {
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    Part { sw, owns }.counter_read(pipes(pipe), &name, index)
                })
                .map_err(|e| e.to_string())?;
            let cells: Vec<Json> = merge_cells(parts, |c| c.pipe)?
                .iter()
                .map(|c| json!({"pipe": c.pipe, "packets": c.packets, "bytes": c.bytes}))
                .collect();
            Ok(json!({ "cells": cells }))
        }
        Request::RegisterRead { name, index, pipe } => {
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    Part { sw, owns }.register_read(pipes(pipe), &name, index)
                })
                .map_err(|e| e.to_string())?;
            let cells: Vec<Json> = merge_cells(parts, |c| c.pipe)?
                .iter()
                .map(|c| json!({"pipe": c.pipe, "lo": c.lo.to_string(), "hi": c.hi.to_string()}))
                .collect();
            Ok(json!({ "cells": cells }))
        }
        Request::MeterRead { name, index, pipe } => {
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    Part { sw, owns }.meter_read(pipes(pipe), &name, index)
                })
                .map_err(|e| e.to_string())?;
            let cells: Vec<Json> = merge_cells(parts, |c| c.pipe)?
                .iter()
                .map(|c| {
                    let rates = c.config.map(|m| {
                        json!({"cir": m.cir, "pir": m.pir, "cbs": m.cbs, "pbs": m.pbs})
                    });
                    json!({"pipe": c.pipe, "byte_count_adjust": c.byte_count_adjust, "rates": rates})
                })
                .collect();
            Ok(json!({ "cells": cells }))
        }
        Request::TableDelete {
            table,
            key,
            priority,
        } => {
            let key = texts(&key)?;
            h.write(CALL_TIMEOUT, move |sw| {
                let prog = sw.program().clone();
                let r = crate::resolve::find_table(&prog, &table).map_err(|e| e.to_string())?;
                let t = crate::resolve::table(&prog, r)
                    .ok_or_else(|| format!("table `{table}` not found"))?;
                let km =
                    crate::resolve::build_key(t, key.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                        .map_err(|e| format!("table `{}`: {e}", t.name))?;
                let priority =
                    crate::resolve::check_priority(t, priority).map_err(|e| e.to_string())?;
                let keys: Vec<(&str, _)> = t
                    .keys
                    .iter()
                    .map(|k| k.name.as_str())
                    .zip(km.iter().copied())
                    .collect();
                sw.table_delete(PipeSel::All, &t.name, &keys, priority)
                    .map(|_| json!({}))
                    .map_err(|e| e.to_string())
            })
        }
        Request::TableAdd(e) | Request::TableModify(e) => {
            let modify = op == "table_modify";
            let key = texts(&e.key)?;
            let params = texts(&e.params)?;
            h.write(CALL_TIMEOUT, move |sw| {
                let prog = sw.program().clone();
                let (name, entry) = crate::resolve::resolve_entry(
                    &prog,
                    &e.table,
                    key.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                    e.priority,
                    &e.action,
                    params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                )
                .map_err(|e| e.to_string())?;
                let r = if modify {
                    let keys: Vec<(&str, _)> =
                        entry.keys.iter().map(|(k, m)| (k.as_str(), *m)).collect();
                    let args: Vec<(&str, _)> =
                        entry.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                    sw.table_modify(
                        PipeSel::All,
                        &name,
                        &keys,
                        entry.priority,
                        &entry.action,
                        &args,
                    )
                } else {
                    sw.table_add_entry(PipeSel::All, &name, &entry)
                };
                r.map_err(|e| e.to_string())?;
                let keys: Vec<(&str, _)> =
                    entry.keys.iter().map(|(k, m)| (k.as_str(), *m)).collect();
                crate::tables_file::set_ttl(sw, &name, &keys, entry.priority, e.ttl_ms)
                    .map(|_| json!({}))
                    .map_err(|e| e.to_string())
            })
        }
        Request::TableList { table } => {
            let now = h.now().0;
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    let prog = sw.program().clone();
                    let r = crate::resolve::find_table(&prog, &table).map_err(|e| e.to_string())?;
                    let pl = &prog.pipelines[r.pipeline];
                    let t = crate::resolve::table(&prog, r)
                        .ok_or_else(|| format!("table `{table}` not found"))?;
                    let entries = sw
                        .table_entries(PipeSel::All, &t.name)
                        .map_err(|e| e.to_string())?
                        .iter()
                        .map(|e| {
                            let key: serde_json::Map<String, Json> = e
                                .keys
                                .iter()
                                .zip(&t.keys)
                                .map(|((k, m), tk)| {
                                    let text =
                                        crate::value::format_key_match(m, tk.expr.width(), k);
                                    (k.clone(), Json::String(text))
                                })
                                .collect();
                            let entry = json!({
                                "key": key, "priority": e.priority, "action": e.action,
                                "params": params_json(pl, &e.action, &e.params),
                            });
                            let idle = t
                                .idle_timeout
                                .then(|| entry_idle(sw, owns, &t.name, e))
                                .flatten();
                            (entry, idle)
                        })
                        .collect::<Vec<_>>();
                    let (action, params) = sw
                        .table_get_default(PipeSel::All, &t.name)
                        .map_err(|e| e.to_string())?;
                    let default = json!({
                        "action": action, "params": params_json(pl, &action, &params),
                    });
                    // Hits and misses of the pipes this instance owns (per-pipe mode) or all.
                    let mut hm = (0, 0);
                    for p in 0..sw.num_pipes() {
                        if owns_pipe(owns, u32::from(p)) {
                            if let Ok((hi, mi)) = sw.table_hit_miss(PipeSel::Pipe(p), &t.name) {
                                hm = (hm.0 + hi, hm.1 + mi);
                            }
                        }
                    }
                    Ok::<_, String>((t.name.clone(), entries, default, hm))
                })
                .map_err(|e| e.to_string())?;
            let mut hits = 0;
            let mut misses = 0;
            let mut first: Option<(String, Vec<ListedEntry>, Json)> = None;
            for p in parts {
                let (name, entries, default, (hi, mi)) = p?;
                hits += hi;
                misses += mi;
                match &mut first {
                    None => first = Some((name, entries, default)),
                    // Per-pipe instances hold the same entries: the latest hit of any wins.
                    Some((_, seen, _)) => {
                        for ((_, a), (_, b)) in seen.iter_mut().zip(entries) {
                            if let (Some(a), Some(b)) = (a.as_mut(), b) {
                                a.1 = a.1.max(b.1);
                            }
                        }
                    }
                }
            }
            let (name, entries, default) =
                first.ok_or_else(|| "no pipeline thread answered".to_string())?;
            let entries: Vec<Json> = entries
                .into_iter()
                .map(|(mut e, idle)| {
                    if let (Some((ttl, last)), Json::Object(m)) = (idle, &mut e) {
                        m.insert("ttl_ms".into(), json!(ttl / 1_000_000));
                        m.insert(
                            "idle_ms".into(),
                            json!(now.saturating_sub(last) / 1_000_000),
                        );
                        m.insert(
                            "idle".into(),
                            json!(ttl > 0 && now.saturating_sub(last) >= ttl),
                        );
                    }
                    e
                })
                .collect();
            Ok(json!({
                "table": name, "entries": entries, "default": default,
                "hits": hits, "misses": misses,
            }))
        }
        Request::Apply { yaml } => {
            let file = crate::tables_file::from_yaml(&yaml).map_err(|e| e.to_string())?;
            h.write(CALL_TIMEOUT, move |sw| {
                let s = crate::tables_file::apply(sw, &file).map_err(|e| e.to_string())?;
                Ok(json!({"applied": {
                    "entries": s.entries, "defaults": s.defaults,
                    "tables_cleared": s.tables_cleared, "registers": s.registers,
                    "mirror_sessions": s.mirror_sessions, "mc_nodes": s.mc_nodes,
                    "mc_groups": s.mc_groups, "prunes": s.prunes, "lags": s.lags,
                    "ports": s.ports, "members": s.members, "groups": s.groups,
                    "value_set_entries": s.value_set_entries, "filters": s.filters,
                    "meters": s.meters,
                }}))
            })
        }
        Request::QueueGet { port } => {
            let pipe = port >> 7;
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    owns_pipe(owns, u32::from(pipe)).then(|| sw.port_queue_stats(port))
                })
                .map_err(|e| e.to_string())?;
            let q = parts
                .into_iter()
                .flatten()
                .next()
                .ok_or_else(|| format!("no pipeline thread owns pipe {pipe} (port {port})"))?
                .map_err(|e| e.to_string())?;
            Ok(json!({
                "port": port, "enqueued": q.enqueued, "enqueued_bytes": q.enqueued_bytes,
                "dropped": q.dropped, "dropped_bytes": q.dropped_bytes, "marked": q.marked,
                "max_depth_bytes": q.max_depth_bytes,
            }))
        }
        Request::LinkGet { port } => {
            let l = h.link(port).map_err(|e| e.to_string())?;
            Ok(json!({
                "port": port,
                "settings": link_json(&l.config()),
                "faults_tx": faults(&l.tx_stats()),
                "faults_rx": faults(&l.rx_stats()),
            }))
        }
        Request::LinkSet { port, settings } => {
            let l = h.link(port).map_err(|e| e.to_string())?;
            let cfg: dataplane::LinkConfig =
                settings.parse().map_err(|e| format!("port {port}: {e}"))?;
            l.set_config(cfg).map_err(|e| format!("port {port}: {e}"))?;
            tracing::info!(port, %settings, "link settings changed");
            Ok(json!({}))
        }
        Request::ProfileRead { profile } => {
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    let pipe = (0..sw.num_pipes()).find(|&p| owns_pipe(owns, u32::from(p)));
                    let sel = pipe.map_or(PipeSel::All, PipeSel::Pipe);
                    let prog = sw.program().clone();
                    let view = sw.profile_read(sel, &profile).map_err(|e| e.to_string())?;
                    let pl = &prog.pipelines[0];
                    let members: Vec<Json> = view
                        .members
                        .iter()
                        .map(|(id, a, params)| {
                            json!({"id": id, "action": a, "params": params_json(pl, a, params)})
                        })
                        .collect();
                    let groups: Vec<Json> = view
                        .groups
                        .iter()
                        .map(|(id, m)| json!({"id": id, "members": m}))
                        .collect();
                    Ok::<_, String>(
                        json!({"profile": profile, "members": members, "groups": groups}),
                    )
                })
                .map_err(|e| e.to_string())?;
            parts
                .into_iter()
                .next()
                .unwrap_or_else(|| Err("no pipeline thread answered".into()))
        }
        Request::MemberDelete { profile, id } => h.write(CALL_TIMEOUT, move |sw| {
            sw.profile_member_delete(PipeSel::All, &profile, id)
                .map(|_| json!({}))
                .map_err(|e| e.to_string())
        }),
        Request::GroupDelete { profile, id } => h.write(CALL_TIMEOUT, move |sw| {
            sw.profile_group_delete(PipeSel::All, &profile, id)
                .map(|_| json!({}))
                .map_err(|e| e.to_string())
        }),
        Request::ValueSetRead { set } => {
            let parts = h
                .each(CALL_TIMEOUT, move |sw, owns| {
                    let pipe = (0..sw.num_pipes()).find(|&p| owns_pipe(owns, u32::from(p)));
                    let sel = pipe.map_or(PipeSel::All, PipeSel::Pipe);
                    value_set_json(sw, sel, &set)
                })
                .map_err(|e| e.to_string())?;
            parts
                .into_iter()
                .next()
                .unwrap_or_else(|| Err("no pipeline thread answered".into()))
        }
        Request::ValueSetDelete { set, fields } => {
            let texts = crate::ctl::texts(&fields)?;
            h.write(CALL_TIMEOUT, move |sw| {
                let prog = sw.program().clone();
                let named = texts
                    .iter()
                    .map(|(k, v)| ((!k.is_empty()).then_some(k.as_str()), v.as_str()));
                let (full, entry) = crate::resolve::resolve_value_set_entry(&prog, &set, named)
                    .map_err(|e| e.to_string())?;
                sw.value_set_delete(PipeSel::All, &full, &entry)
                    .map(|()| json!({}))
                    .map_err(|e| e.to_string())
            })
        }
        Request::LinkDown { port } | Request::LinkUp { port } => {
            let up = matches!(req, Request::LinkUp { .. });
            let l = h.link(port).map_err(|e| e.to_string())?;
            l.set_link_up(up);
            tracing::info!(port, up, "link state changed");
            Ok(json!({}))
        }
    }
}

/// A value set's entries on the selected pipes, each field as match text.
fn value_set_json(sw: &pipeline::switch::Switch, sel: PipeSel, set: &str) -> Result<Json, String> {
    let prog = sw.program();
    let r = crate::resolve::find_value_set(prog, set).map_err(|e| e.to_string())?;
    let vs = &prog.pipelines[r.pipeline].value_sets[r.index];
    let entries = sw
        .value_set_entries(sel, &vs.name)
        .map_err(|e| e.to_string())?;
    let rows: Vec<Json> = entries
        .iter()
        .map(|e| {
            let fields: serde_json::Map<String, Json> = vs
                .fields
                .iter()
                .zip(&e.fields)
                .map(|((n, w), (value, mask))| {
                    let m = if *mask == crate::value::width_mask(*w) {
                        pipeline::ir::KeyMatch::Exact(*value)
                    } else {
                        pipeline::ir::KeyMatch::Ternary {
                            value: *value,
                            mask: *mask,
                        }
                    };
                    (
                        n.clone(),
                        Json::String(crate::value::format_key_match(&m, *w, n)),
                    )
                })
                .collect();
            json!({"pipe": e.pipe, "fields": fields})
        })
        .collect();
    Ok(json!({"value_set": vs.name, "size": vs.size, "entries": rows}))
}

fn faults(f: &dataplane::FaultStats) -> Json {
    json!({
        "lost": f.lost, "duplicated": f.duplicated, "reordered": f.reordered,
        "corrupted": f.corrupted, "down_dropped": f.down_dropped, "queue_dropped": f.queue_dropped,
        "stop_dropped": f.stop_dropped,
    })
}

fn link_json(c: &dataplane::LinkConfig) -> Json {
    serde_json::to_value(c).unwrap_or(Json::Null)
}

/// The control socket's server: an accept thread and one thread per connection, at most
/// [`MAX_CONNS`] of them.
pub struct CtlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl CtlServer {
    /// Listens on `path` (its directory is created; a stale socket file is replaced, a live one
    /// is refused), closing connections idle for [`IDLE_TIMEOUT`].
    pub fn start(path: &Path, h: SwitchHandle) -> Result<CtlServer, ServerError> {
        CtlServer::start_with(path, h, IDLE_TIMEOUT)
    }

    /// As [`CtlServer::start`], closing a connection that sends nothing for `idle`.
    pub fn start_with(
        path: &Path,
        h: SwitchHandle,
        idle: Duration,
    ) -> Result<CtlServer, ServerError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| ServerError::io("cannot create", dir, e))?;
        }
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(ServerError::InUse(path.to_path_buf()));
            }
            std::fs::remove_file(path)
                .map_err(|e| ServerError::io("cannot remove stale socket", path, e))?;
        }
        let listener =
            UnixListener::bind(path).map_err(|e| ServerError::io("cannot listen on", path, e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| ServerError::io("cannot listen on", path, e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("pisa-ctl".into())
            .spawn(move || {
                let open = Arc::new(AtomicUsize::new(0));
                while !flag.load(Ordering::Acquire) {
                    match listener.accept() {
                        Ok((mut s, _)) => {
                            if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNS {
                                open.fetch_sub(1, Ordering::AcqRel);
                                tracing::warn!(max = MAX_CONNS, "control connection refused");
                                let _ = s.set_nonblocking(false);
                                let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
                                let _ = writeln!(s, "{}", too_many_connections());
                                continue;
                            }
                            let slot = ConnSlot(open.clone());
                            let h = h.clone();
                            let flag = flag.clone();
                            let _ = std::thread::Builder::new()
                                .name("pisa-ctl-conn".into())
                                .spawn(move || {
                                    let _slot = slot;
                                    serve_conn(s, &h, &flag, idle)
                                });
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(20))
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "control socket accept failed");
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            })
            .map_err(|e| ServerError::io("cannot start the thread for", path, e))?;
        Ok(CtlServer {
            path: path.to_path_buf(),
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for CtlServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Releases a connection slot when a connection thread ends.
struct ConnSlot(Arc<AtomicUsize>);

impl Drop for ConnSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The answer to a line that passed [`MAX_LINE`] without a newline; the connection is closed
/// after it, having buffered no more than the limit.
pub fn line_too_long() -> Json {
    json!({"ok": false, "error": format!(
        "line too long: a request line is at most {MAX_LINE} bytes; closing the connection"
    )})
}

/// The answer to a client beyond [`MAX_CONNS`]; its connection is closed after it.
pub fn too_many_connections() -> Json {
    json!({"ok": false, "error": format!(
        "too many connections: the control socket serves at most {MAX_CONNS} at a time; \
         close one and retry"
    )})
}

/// The answer to a connection that completed no request line for `idle`; it is closed after it.
pub fn idle_timeout(idle: Duration) -> Json {
    json!({"ok": false, "error": format!(
        "idle timeout: no complete request line received for {idle:?}; closing the connection"
    )})
}

/// Tells a connection that completed no line within `idle` why it is being closed.
fn close_idle(w: &mut UnixStream, idle: Duration) {
    tracing::info!(
        idle_ms = idle.as_millis() as u64,
        "idle control connection closed"
    );
    let _ = w.set_write_timeout(Some(Duration::from_millis(100)));
    let _ = writeln!(w, "{}", idle_timeout(idle));
}

/// Reads request lines, never holding more than [`MAX_LINE`] bytes of one: a line that
/// passes the limit is answered with [`line_too_long`] and the connection closed, and so is
/// a connection that completes no line within `idle` of opening or of its last answer
/// ([`idle_timeout`]; bytes of an unfinished line do not restart the clock).
fn serve_conn(mut s: UnixStream, h: &SwitchHandle, stop: &AtomicBool, idle: Duration) {
    use std::io::Read;
    use std::time::Instant;
    // Wake up now and then to notice a shutdown or an idle client.
    let _ = s.set_read_timeout(Some(
        idle.clamp(Duration::from_millis(1), Duration::from_millis(200)),
    ));
    let Ok(mut w) = s.try_clone() else { return };
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    let mut last = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let n = match s.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                if last.elapsed() >= idle {
                    return close_idle(&mut w, idle);
                }
                continue;
            }
            Err(_) => return,
        };
        if last.elapsed() >= idle {
            // A line trickled in more slowly than the timeout allows.
            return close_idle(&mut w, idle);
        }
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (part, complete) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = &rest[(part.len() + usize::from(complete))..];
            if line.len() + part.len() > MAX_LINE {
                let _ = writeln!(w, "{}", line_too_long());
                return;
            }
            line.extend_from_slice(part);
            if !complete {
                break;
            }
            let reply = match std::str::from_utf8(&line) {
                Err(e) => Some(
                    json!({"ok": false, "error": format!("bad request: not UTF-8 text ({e})")}),
                ),
                Ok(t) if t.trim().is_empty() => None,
                Ok(t) => Some(handle_line(h, t.trim())),
            };
            line.clear();
            if let Some(reply) = reply {
                if writeln!(w, "{reply}").is_err() {
                    return;
                }
            }
            last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use dataplane::mem::pair;
    use dataplane::runtime::{PortSetup, Runtime, RuntimeConfig};
    use dataplane::{Clock, LinkConfig, VirtualClock};

    use super::*;
    use dataplane::switch::SwitchPipeline;
    use pipeline::switch::{Switch, SwitchConfig};

    /// l2l3.p4 with the lab's tables on two in-memory ports.
    fn runtime() -> Runtime<SwitchPipeline> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let opts = p4::compile::CompileOptions::default();
        let prog = p4::compile::compile_file(&root.join("p4/programs/l2l3.p4"), &opts)
            .unwrap()
            .program;
        let cfg = SwitchConfig {
            pipes: 4,
            ..SwitchConfig::default()
        };
        let mut sw = Switch::new(Arc::new(prog), cfg).unwrap();
        let file = crate::tables_file::load(&root.join("p4/programs/l2l3.tables.yaml")).unwrap();
        crate::tables_file::apply(&mut sw, &file).unwrap();
        let ports = (0..2)
            .map(|i| PortSetup {
                devport: i,
                port: Box::new(pair(&format!("sw{i}"), &format!("h{i}")).0),
                link: LinkConfig::default(),
            })
            .collect();
        let clock: Arc<dyn Clock> = Arc::new(VirtualClock::new());
        Runtime::start(
            SwitchPipeline { sw },
            ports,
            clock,
            RuntimeConfig::default(),
        )
        .unwrap()
    }

    fn err(h: &SwitchHandle, line: &str) -> String {
        let r = handle_line(h, line);
        assert_eq!(r["ok"], false, "{line} -> {r}");
        r["error"].as_str().unwrap().to_string()
    }

    #[test]
    fn requests_work_and_bad_ones_name_the_culprit() {
        let rt = runtime();
        let h = SwitchHandle::Single(rt.handle());
        let ok = |line: &str| {
            let r = handle_line(&h, line);
            assert_eq!(r["ok"], true, "{line} -> {r}");
            r
        };
        let r = ok(r#"{"op":"stats"}"#);
        assert_eq!(r["ports"].as_array().unwrap().len(), 2);
        ok(
            r#"{"op":"table_add","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:09:09"},"action":"set_port","params":{"port":1}}"#,
        );
        let n = h
            .each(CALL_TIMEOUT, |sw, _| {
                sw.table_len(PipeSel::All, "SwitchIngress.mac_dst")
            })
            .unwrap();
        assert_eq!(n, vec![Ok(5)]);
        ok(
            r#"{"op":"table_delete","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:09:09"}}"#,
        );
        assert!(err(&h, r#"{"op":"table_delete","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:09:09"}}"#).contains("mac_dst"));
        let r = ok(r#"{"op":"counter_read","name":"ingress_port_counter","index":3}"#);
        assert_eq!(r["cells"][0]["packets"], 0);
        ok(r#"{"op":"link_set","port":1,"settings":"delay=5us,loss=0.5"}"#);
        let r = ok(r#"{"op":"link_get","port":1}"#);
        assert_eq!(r["settings"]["tx"]["faults"]["loss"], 0.5);
        ok(r#"{"op":"link_down","port":0}"#);

        assert!(err(&h, "not json").contains("bad request"));
        assert!(err(&h, r#"{"op":"reboot"}"#).contains("reboot"));
        assert!(err(&h, r#"{"op":"stats","extra":1}"#).contains("extra"));
        assert!(err(&h, r#"{"op":"link_down","port":7}"#).contains('7'));
        assert!(err(&h, r#"{"op":"link_set","port":1,"settings":"jitter=1"}"#).contains("jitter"));
        assert!(err(&h, r#"{"op":"table_add","table":"mac_dst","key":{"nope":"1"},"action":"set_port","params":{"port":1}}"#).contains("nope"));
        assert!(err(&h, r#"{"op":"table_add","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"zz"},"action":"set_port","params":{"port":1}}"#).contains("zz"));
        assert!(err(&h, r#"{"op":"table_add","table":"mac_dst","key":{"hdr.ethernet.dst_addr":[1]},"action":"set_port"}"#).contains("hdr.ethernet.dst_addr"));
        assert!(err(
            &h,
            r#"{"op":"register_read","name":"no_such_reg","index":0}"#
        )
        .contains("no_such_reg"));
        assert!(err(
            &h,
            r#"{"op":"counter_read","name":"ingress_port_counter","index":9999}"#
        )
        .contains("9999"));
        drop(rt.stop().unwrap());
    }

    #[test]
    fn entries_are_listed_modified_and_whole_files_applied_while_running() {
        let rt = runtime();
        let h = SwitchHandle::Single(rt.handle());
        let ok = |line: &str| {
            let r = handle_line(&h, line);
            assert_eq!(r["ok"], true, "{line} -> {r}");
            r
        };
        let r = ok(r#"{"op":"table_list","table":"mac_dst"}"#);
        assert_eq!(r["table"], "SwitchIngress.mac_dst");
        assert_eq!(r["entries"].as_array().unwrap().len(), 4);
        assert_eq!(r["default"]["action"], "SwitchIngress.flood");
        assert_eq!(r["default"]["params"]["mgid"], "1");
        let h1 = r["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"]["hdr.ethernet.dst_addr"] == "02:00:00:00:00:01")
            .expect("h1's entry is listed with its key");
        assert_eq!(h1["params"]["port"], "0");

        let r = ok(r#"{"op":"table_list","table":"ipv4_lpm"}"#);
        assert!(
            r["entries"].as_array().unwrap().iter().any(|e| {
                e["key"]["hdr.ipv4.dst_addr"] == "10.0.2.0/24" && e["params"]["nexthop_id"] == "3"
            }),
            "routes are listed as a user writes them: {r}"
        );
        ok(
            r#"{"op":"table_modify","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:00:01"},"action":"set_port","params":{"port":3}}"#,
        );
        let r = ok(r#"{"op":"table_list","table":"SwitchIngress.mac_dst"}"#);
        let h1 = r["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"]["hdr.ethernet.dst_addr"] == "02:00:00:00:00:01")
            .unwrap();
        assert_eq!(h1["params"]["port"], "3", "{r}");
        assert!(err(&h, r#"{"op":"table_modify","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:09:09"},"action":"set_port","params":{"port":3}}"#).contains("mac_dst"));

        let yaml = "tables:\n  - table: mac_dst\n    clear: true\n    default: { action: drop }\n    entries:\n      - { key: { hdr.ethernet.dst_addr: \"02:00:00:00:00:07\" }, action: set_port, params: { port: 1 } }\nports:\n  - { port: 1, rate_bps: 1000000000, queue_bytes: 100000, ecn_kmin_bytes: 5000, ecn_kmax_bytes: 50000, ecn_pmax: 0.01 }\n";
        let r = ok(&json!({"op": "apply", "yaml": yaml}).to_string());
        assert_eq!(r["applied"]["entries"], 1);
        assert_eq!(r["applied"]["tables_cleared"], 1);
        assert_eq!(r["applied"]["defaults"], 1);
        assert_eq!(r["applied"]["ports"], 1);
        let r = ok(r#"{"op":"table_list","table":"mac_dst"}"#);
        assert_eq!(r["entries"].as_array().unwrap().len(), 1);
        assert_eq!(r["default"]["action"], "SwitchIngress.drop");
        let r = ok(r#"{"op":"queue_get","port":1}"#);
        assert_eq!(r["enqueued"], 0);
        let bad = json!({"op": "apply", "yaml": "tables:\n  - table: nope\n"}).to_string();
        assert!(err(&h, &bad).contains("nope"));
        let bad = json!({"op": "apply", "yaml": "tables: ["}).to_string();
        assert!(!err(&h, &bad).is_empty());
        assert!(err(&h, r#"{"op":"queue_get","port":600}"#).contains("600"));
        // Past the pipes a u8 mask can name (pipe 8): an error, and the thread still serves.
        assert!(err(&h, r#"{"op":"queue_get","port":1024}"#).contains("1024"));
        ok(r#"{"op":"queue_get","port":1}"#);
        assert!(err(&h, r#"{"op":"table_list","table":"nope"}"#).contains("nope"));
        drop(rt.stop().unwrap());
    }

    /// Reads one reply line (at most 64 KiB) from a raw socket.
    fn reply_of(s: &mut UnixStream) -> String {
        use std::io::Read;
        let mut out = Vec::new();
        let mut b = [0u8; 1];
        while out.len() < 65536 {
            match s.read(&mut b) {
                Ok(1) if b[0] == b'\n' => break,
                Ok(1) => out.push(b[0]),
                _ => break,
            }
        }
        String::from_utf8(out).unwrap()
    }

    fn at_eof(s: &mut UnixStream) -> bool {
        use std::io::Read;
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // Closed with our bytes unread, the socket may read as reset rather than at its end.
        match s.read(&mut [0u8; 16]) {
            Ok(0) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    }

    #[test]
    fn a_line_is_refused_as_it_passes_the_limit_without_waiting_for_its_newline() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let _srv = CtlServer::start(&path, SwitchHandle::Single(rt.handle())).unwrap();
        let mut s = UnixStream::connect(&path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // A good request first: the connection works.
        writeln!(s, r#"{{"op":"stats"}}"#).unwrap();
        assert!(reply_of(&mut s).contains(r#""ok":true"#));
        // Then more than the limit and no newline: the answer comes without one.
        let mut w = s.try_clone().unwrap();
        let writer = std::thread::spawn(move || {
            let chunk = vec![b'x'; 64 << 10];
            let mut sent = 0;
            // Stops when the server closes the connection.
            while sent < 4 * MAX_LINE && w.write_all(&chunk).is_ok() {
                sent += chunk.len();
            }
            sent
        });
        let r = reply_of(&mut s);
        assert!(
            r.contains("line too long") && r.contains(&MAX_LINE.to_string()),
            "{r}"
        );
        assert!(at_eof(&mut s), "the connection is closed after the error");
        let sent = writer.join().unwrap();
        assert!(
            sent < 4 * MAX_LINE,
            "the server stopped reading: {sent} bytes went out"
        );
        // The server still serves others.
        let mut s2 = UnixStream::connect(&path).unwrap();
        writeln!(s2, r#"{{"op":"stats"}}"#).unwrap();
        assert!(reply_of(&mut s2).contains(r#""ok":true"#));
        // A line just at the limit is read whole (and answered as a bad request).
        let mut line = vec![b' '; MAX_LINE - 2];
        line[0] = b'"';
        line[MAX_LINE - 3] = b'"';
        line.push(b'\n');
        let mut w2 = s2.try_clone().unwrap();
        let t = std::thread::spawn(move || w2.write_all(&line).is_ok());
        let r = reply_of(&mut s2);
        assert!(t.join().unwrap());
        assert!(r.contains("bad request") && !r.contains("too long"), "{r}");
        drop(rt.stop().unwrap());
    }

    #[test]
    fn connections_beyond_the_cap_get_a_named_error_and_slots_come_back() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let _srv = CtlServer::start(&path, SwitchHandle::Single(rt.handle())).unwrap();
        let mut open: Vec<UnixStream> = (0..MAX_CONNS)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        // Each of them is served.
        for s in open.iter_mut() {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            writeln!(s, r#"{{"op":"stats"}}"#).unwrap();
            assert!(reply_of(s).contains(r#""ok":true"#));
        }
        let mut extra = UnixStream::connect(&path).unwrap();
        extra
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let r = reply_of(&mut extra);
        assert!(
            r.contains("too many connections") && r.contains("64"),
            "{r}"
        );
        assert!(at_eof(&mut extra));
        // Closing one frees its slot (the thread notices within its read timeout).
        drop(open.pop());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let mut s = UnixStream::connect(&path).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let _ = writeln!(s, r#"{{"op":"stats"}}"#);
            let r = reply_of(&mut s);
            if r.contains(r#""ok":true"#) {
                break;
            }
            assert!(r.contains("too many connections"), "{r}");
            assert!(
                std::time::Instant::now() < deadline,
                "the slot never came back"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(open);
        drop(rt.stop().unwrap());
    }

    /// A request quoting a megabyte name gets an answer of bounded size (issue 13).
    #[test]
    fn huge_names_are_not_echoed_whole() {
        let rt = runtime();
        let h = SwitchHandle::Single(rt.handle());
        let name = "t".repeat(900_000);
        for req in [
            format!(r#"{{"op":"table_list","table":"{name}"}}"#),
            format!(r#"{{"op":"{name}"}}"#),
        ] {
            let r = handle_line(&h, &req).to_string();
            assert!(r.contains(r#""ok":false"#), "{}", &r[..200]);
            assert!(r.contains("characters ...]"), "{}", &r[..200]);
            assert!(
                r.len() < 2 * p4::diag::MAX_MESSAGE_SHOWN,
                "{} bytes",
                r.len()
            );
        }
        drop(rt.stop().unwrap());
    }

    /// Bytes of an unfinished line do not restart the idle clock: a client trickling one byte
    /// every 50 ms with no newline is closed once the 300 ms timeout passes (it used to be kept
    /// for ever, so 64 of them locked `pisa ctl` out), while a client completing lines stays.
    #[test]
    fn trickling_clients_are_closed_when_no_line_completes_in_time() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let idle = Duration::from_millis(300);
        let _srv = CtlServer::start_with(&path, SwitchHandle::Single(rt.handle()), idle).unwrap();
        let mut slow = UnixStream::connect(&path).unwrap();
        let mut busy = UnixStream::connect(&path).unwrap();
        busy.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut closed = false;
        for i in 0..40 {
            if slow.write_all(b" ").is_err() {
                closed = true;
                break;
            }
            if i % 3 == 0 {
                writeln!(busy, r#"{{"op":"stats"}}"#).unwrap();
                assert!(reply_of(&mut busy).contains(r#""ok":true"#));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // 40 bytes over 2 s: the server answered (or closed) well before the last one.
        slow.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let r = reply_of(&mut slow);
        assert!(
            r.contains("idle timeout") && r.contains("300ms"),
            "{closed} {r}"
        );
        assert!(at_eof(&mut slow));
        drop(rt.stop().unwrap());
    }

    #[test]
    fn idle_connections_are_closed_with_a_named_error_and_free_their_slots() {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let idle = Duration::from_millis(300);
        let _srv = CtlServer::start_with(&path, SwitchHandle::Single(rt.handle()), idle).unwrap();
        // A client that keeps asking outlives the timeout several times over.
        let mut busy = UnixStream::connect(&path).unwrap();
        busy.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // Every slot taken by clients that send nothing.
        let mut idle_clients: Vec<UnixStream> = (0..MAX_CONNS - 1)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        for _ in 0..6 {
            writeln!(busy, r#"{{"op":"stats"}}"#).unwrap();
            assert!(reply_of(&mut busy).contains(r#""ok":true"#));
            std::thread::sleep(Duration::from_millis(150));
        }
        // Each idle one was told why and closed.
        for s in idle_clients.iter_mut() {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let r = reply_of(s);
            assert!(r.contains("idle timeout") && r.contains("300ms"), "{r}");
            assert!(at_eof(s));
        }
        // Their slots came back: a newcomer is served.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let mut s = UnixStream::connect(&path).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let _ = writeln!(s, r#"{{"op":"stats"}}"#);
            let r = reply_of(&mut s);
            if r.contains(r#""ok":true"#) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no slot came back: {r}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(idle_clients);
        drop(rt.stop().unwrap());
    }

    /// `ttl_ms` on a table with idle timeouts: `table_list` shows each entry's TTL and time
    /// since its last hit on the switch's clock, and marks it idle past its TTL; a table
    /// without idle timeouts refuses a TTL.
    #[test]
    fn table_list_shows_entry_ttls_and_idle_time() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let opts = p4::compile::CompileOptions::default();
        let prog = p4::compile::compile_file(&root.join("tests/data/direct_resources.p4"), &opts)
            .unwrap()
            .program;
        let sw = Switch::new(Arc::new(prog), SwitchConfig::default()).unwrap();
        let clock = Arc::new(VirtualClock::new());
        let port = PortSetup {
            devport: 0,
            port: Box::new(pair("sw0", "h0").0),
            link: LinkConfig::default(),
        };
        let rt = Runtime::start(
            SwitchPipeline { sw },
            vec![port],
            clock.clone(),
            RuntimeConfig::default(),
        )
        .unwrap();
        let h = SwitchHandle::Single(rt.handle());
        let add = |last: u8, ttl: u64| {
            format!(
                r#"{{"op":"table_add","table":"fwd","key":{{"hdr.ethernet.dst_addr":"02:00:00:00:00:{last:02x}"}},"action":"send","params":{{"port":1}},"ttl_ms":{ttl}}}"#
            )
        };
        for (last, ttl) in [(9, 100), (10, 0)] {
            let r = handle_line(&h, &add(last, ttl));
            assert_eq!(r["ok"], true, "{r}");
        }
        clock.advance(dataplane::Nanos(250_000_000));
        let r = handle_line(&h, r#"{"op":"table_list","table":"fwd"}"#);
        let entries = r["entries"].as_array().unwrap();
        let of = |mac: &str| {
            entries
                .iter()
                .find(|e| e["key"]["hdr.ethernet.dst_addr"] == mac)
                .unwrap()
                .clone()
        };
        let aged = of("02:00:00:00:00:09");
        assert_eq!(
            (
                aged["ttl_ms"].as_u64(),
                aged["idle_ms"].as_u64(),
                aged["idle"].as_bool()
            ),
            (Some(100), Some(250), Some(true)),
            "{r}"
        );
        let never = of("02:00:00:00:00:0a");
        assert_eq!(
            (never["ttl_ms"].as_u64(), never["idle"].as_bool()),
            (Some(0), Some(false))
        );
        drop(rt.stop().unwrap());
        let rt = runtime();
        let h = SwitchHandle::Single(rt.handle());
        let e = err(
            &h,
            r#"{"op":"table_add","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:09:09"},"action":"set_port","params":{"port":1},"ttl_ms":5}"#,
        );
        assert!(e.contains("idle timeout"), "{e}");
        drop(rt.stop().unwrap());
    }
}
