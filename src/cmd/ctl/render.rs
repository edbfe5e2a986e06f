//! `pisa ctl`'s answers as a person reads them: aligned tables and `name: value` lines, built
//! from the control socket's JSON reply (which `--json` prints unchanged).

use std::fmt::Write as _;

use comfy_table::{presets, CellAlignment, Table};
use serde_json::Value as Json;

use super::CtlCommand;

/// A table with the given header, no borders: columns padded with spaces, numbers right-aligned.
fn table(header: &[&str], rows: Vec<Vec<String>>, right: &[usize]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(header.iter().map(|h| h.to_string()));
    for r in rows {
        t.add_row(r);
    }
    for &c in right {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut s = t.to_string();
    s.push('\n');
    s
}

/// A JSON value as plain text: strings without quotes, numbers as they are.
fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        other => other.to_string(),
    }
}

/// `k=v, k=v` of an object's fields.
fn kv(v: &Json) -> String {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The non-zero counters of an object (`lost 3, duplicated 1`), or `none`.
fn nonzero(v: &Json) -> String {
    let parts: Vec<String> = v
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, n)| n.as_u64().is_some_and(|n| n > 0))
                .map(|(k, n)| format!("{k} {n}"))
                .collect()
        })
        .unwrap_or_default();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn stats(r: &Json) -> String {
    let rows = r["ports"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    let faults = format!(
                        "tx: {}; rx: {}",
                        nonzero(&p["faults_tx"]),
                        nonzero(&p["faults_rx"])
                    );
                    vec![
                        text(&p["port"]),
                        text(&p["name"]),
                        text(&p["rx"]),
                        text(&p["rx_bytes"]),
                        text(&p["tx"]),
                        text(&p["tx_bytes"]),
                        text(&p["drops"]),
                        faults,
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    let mut s = table(
        &[
            "PORT",
            "NAME",
            "RX",
            "RX BYTES",
            "TX",
            "TX BYTES",
            "DROPS",
            "LINK FAULTS",
        ],
        rows,
        &[0, 2, 3, 4, 5, 6],
    );
    let _ = writeln!(
        s,
        "processed {} frame(s); {} sent to a port that does not exist",
        text(&r["processed"]),
        text(&r["no_port"])
    );
    let _ = writeln!(s, "switch drops: {}", nonzero(&r["switch_drops"]));
    if let Some(ts) = r["threads"].as_array().filter(|t| t.len() > 1) {
        let rows = ts
            .iter()
            .map(|t| {
                [
                    "pipe",
                    "frames",
                    "batches",
                    "copies_in",
                    "copies_out",
                    "cross_full",
                ]
                .iter()
                .map(|k| text(&t[*k]))
                .collect()
            })
            .collect();
        s += &table(
            &[
                "PIPE THREAD",
                "FRAMES",
                "BATCHES",
                "COPIES IN",
                "COPIES OUT",
                "CROSS FULL",
            ],
            rows,
            &[0, 1, 2, 3, 4, 5],
        );
    }
    s
}

fn cells(r: &Json, cols: &[(&str, &str)]) -> String {
    let rows = r["cells"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| cols.iter().map(|(k, _)| text(&c[*k])).collect())
                .collect()
        })
        .unwrap_or_default();
    let header: Vec<&str> = cols.iter().map(|(_, h)| *h).collect();
    let right: Vec<usize> = (0..cols.len()).collect();
    table(&header, rows, &right)
}

/// A meter's adjustment per pipe, and the cell's rates when one was asked for.
fn meter(r: &Json, with_cell: bool) -> String {
    let cs = r["cells"].as_array().cloned().unwrap_or_default();
    let rows = cs
        .iter()
        .map(|c| {
            let mut row = vec![text(&c["pipe"]), text(&c["byte_count_adjust"])];
            if with_cell {
                let rates = &c["rates"];
                if rates.is_null() {
                    row.extend(["unconfigured".into(), "".into(), "".into(), "".into()]);
                } else {
                    row.extend(["cir", "pir", "cbs", "pbs"].map(|k| text(&rates[k])));
                }
            }
            row
        })
        .collect();
    if with_cell {
        let header = ["PIPE", "BYTE ADJUST", "CIR/s", "PIR/s", "CBS", "PBS"];
        table(&header, rows, &[0, 1, 2, 3, 4, 5])
    } else {
        table(&["PIPE", "BYTE ADJUST"], rows, &[0, 1])
    }
}

fn table_list(r: &Json) -> String {
    let entries = r["entries"].as_array().cloned().unwrap_or_default();
    let mut s = format!(
        "table {}: {} entr{}, {} hit(s), {} miss(es)\n",
        text(&r["table"]),
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" },
        text(&r["hits"]),
        text(&r["misses"])
    );
    let keys: Vec<String> = entries
        .first()
        .and_then(|e| e["key"].as_object())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    // Tables with idle timeouts: each entry's TTL and how long it has not been hit.
    let ages = entries.iter().any(|e| e.get("ttl_ms").is_some());
    if !entries.is_empty() {
        let rows = entries
            .iter()
            .map(|e| {
                let mut row: Vec<String> = keys.iter().map(|k| text(&e["key"][k])).collect();
                row.push(text(&e["priority"]));
                row.push(format!("{}({})", text(&e["action"]), kv(&e["params"])));
                if ages {
                    row.push(match e["ttl_ms"].as_u64() {
                        Some(0) | None => "-".into(),
                        Some(t) => t.to_string(),
                    });
                    let idle = if e["idle"].as_bool() == Some(true) {
                        " (idle)"
                    } else {
                        ""
                    };
                    row.push(format!("{}{idle}", text(&e["idle_ms"])));
                }
                row
            })
            .collect();
        let mut header: Vec<&str> = keys.iter().map(String::as_str).collect();
        header.push("PRIORITY");
        header.push("ACTION");
        if ages {
            header.push("TTL MS");
            header.push("UNHIT MS");
        }
        s += &table(&header, rows, &[]);
    }
    let d = &r["default"];
    let _ = writeln!(s, "default: {}({})", text(&d["action"]), kv(&d["params"]));
    s
}

/// One direction of a link in words: `10 Gbit/s, delay 5 us, loss 1%` or `clean`.
fn direction(d: &dataplane::link::DirectionConfig) -> String {
    let mut p = Vec::new();
    match d.rate_bps {
        0 => {}
        r if r >= 1_000_000_000 => p.push(format!("{} Gbit/s", r as f64 / 1e9)),
        r => p.push(format!("{} Mbit/s", r as f64 / 1e6)),
    }
    if d.delay_ns > 0 {
        p.push(format!("delay {} us", d.delay_ns as f64 / 1e3));
    }
    let f = &d.faults;
    for (name, v) in [
        ("loss", f.loss),
        ("duplicate", f.duplicate),
        ("corrupt", f.corrupt),
    ] {
        if v > 0.0 {
            p.push(format!("{name} {}%", v * 100.0));
        }
    }
    if f.reorder > 0.0 {
        p.push(format!(
            "reorder {}% by {} us",
            f.reorder * 100.0,
            f.reorder_delay_ns as f64 / 1e3
        ));
    }
    if let Some(ip) = f.drop_ipv4_dst {
        p.push(format!("dropping what goes to {ip}"));
    }
    if f.link_down {
        p.push("DOWN".into());
    }
    if p.is_empty() {
        "clean (no rate limit, delay or faults)".into()
    } else {
        p.join(", ")
    }
}

fn link(r: &Json) -> String {
    let settings = match serde_json::from_value::<dataplane::LinkConfig>(r["settings"].clone()) {
        Ok(c) => format!(
            "  sends:    {}\n  receives: {}\n",
            direction(&c.tx),
            direction(&c.rx)
        ),
        Err(_) => format!("  {}\n", kv(&r["settings"])),
    };
    format!(
        "port {}:\n{settings}  faults so far, sent: {}; received: {}\n",
        text(&r["port"]),
        nonzero(&r["faults_tx"]),
        nonzero(&r["faults_rx"])
    )
}

fn queue(r: &Json) -> String {
    format!(
        "port {} queue: enqueued {} ({} B), tail-dropped {} ({} B), ECN-marked {}, deepest \
         backlog {} B\n",
        text(&r["port"]),
        text(&r["enqueued"]),
        text(&r["enqueued_bytes"]),
        text(&r["dropped"]),
        text(&r["dropped_bytes"]),
        text(&r["marked"]),
        text(&r["max_depth_bytes"])
    )
}

fn value_set(r: &Json) -> String {
    let empty = Vec::new();
    let entries = r["entries"].as_array().unwrap_or(&empty);
    let mut s = format!(
        "value set {}: {} of {} entries\n",
        text(&r["value_set"]),
        entries.len(),
        text(&r["size"])
    );
    if let Some(first) = entries.first().and_then(|e| e["fields"].as_object()) {
        let mut head: Vec<&str> = vec!["PIPE"];
        head.extend(first.keys().map(String::as_str));
        let rows = entries
            .iter()
            .map(|e| {
                let mut row = vec![text(&e["pipe"])];
                row.extend(head[1..].iter().map(|k| text(&e["fields"][*k])));
                row
            })
            .collect();
        s += &table(&head, rows, &[0]);
    }
    s
}

fn profile(r: &Json) -> String {
    let empty = Vec::new();
    let members = r["members"].as_array().unwrap_or(&empty);
    let groups = r["groups"].as_array().unwrap_or(&empty);
    let mut s = format!(
        "action profile {}: {} member(s), {} group(s)\n",
        text(&r["profile"]),
        members.len(),
        groups.len()
    );
    if !members.is_empty() {
        let rows = members
            .iter()
            .map(|m| {
                vec![
                    text(&m["id"]),
                    format!("{}({})", text(&m["action"]), kv(&m["params"])),
                ]
            })
            .collect();
        s += &table(&["MEMBER", "ACTION"], rows, &[0]);
    }
    if !groups.is_empty() {
        let rows = groups
            .iter()
            .map(|g| {
                let ms: Vec<String> = g["members"]
                    .as_array()
                    .map(|a| a.iter().map(text).collect())
                    .unwrap_or_default();
                vec![text(&g["id"]), ms.join(", ")]
            })
            .collect();
        s += &table(&["GROUP", "MEMBERS"], rows, &[0]);
    }
    s
}

/// The reply to `cmd` (a successful one) for a person.
pub fn human(cmd: &CtlCommand, r: &Json) -> String {
    match cmd {
        CtlCommand::Stats => stats(r),
        CtlCommand::Counter { .. } => cells(
            r,
            &[("pipe", "PIPE"), ("packets", "PACKETS"), ("bytes", "BYTES")],
        ),
        CtlCommand::Register { .. } => cells(r, &[("pipe", "PIPE"), ("lo", "LO"), ("hi", "HI")]),
        CtlCommand::Meter { index, .. } => meter(r, index.is_some()),
        CtlCommand::TableList { .. } => table_list(r),
        CtlCommand::Apply { .. } => format!("applied: {}\n", kv(&r["applied"])),
        CtlCommand::Queue { .. } => queue(r),
        CtlCommand::LinkGet { .. } => link(r),
        CtlCommand::Raw { .. } => {
            serde_json::to_string_pretty(r).unwrap_or_else(|_| r.to_string()) + "\n"
        }
        CtlCommand::ProfileList { .. } => profile(r),
        CtlCommand::ValueSetList { .. } => value_set(r),
        CtlCommand::MemberSet { .. }
        | CtlCommand::GroupSet { .. }
        | CtlCommand::ValueSetAdd { .. }
        | CtlCommand::MeterAdjust { .. }
        | CtlCommand::ValueSetDelete { .. } => "ok\n".into(),
        CtlCommand::TableAdd(_)
        | CtlCommand::MemberDelete { .. }
        | CtlCommand::GroupDelete { .. }
        | CtlCommand::TableDelete { .. }
        | CtlCommand::TableModify(_)
        | CtlCommand::LinkSet { .. }
        | CtlCommand::LinkDown { .. }
        | CtlCommand::LinkUp { .. } => "ok\n".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_listing_has_a_column_per_key_field_and_the_default() {
        let r = json!({"ok": true, "table": "SwitchIngress.mac_dst", "hits": 4, "misses": 2,
            "entries": [
                {"key": {"hdr.ethernet.dst_addr": "02:00:00:00:00:01"}, "priority": null,
                 "action": "set_port", "params": {"port": "0"}},
                {"key": {"hdr.ethernet.dst_addr": "02:00:00:00:00:02"}, "priority": null,
                 "action": "set_port", "params": {"port": "1"}}],
            "default": {"action": "flood", "params": {"mgid": "1"}}});
        let s = table_list(&r);
        assert!(
            s.starts_with("table SwitchIngress.mac_dst: 2 entries, 4 hit(s), 2 miss(es)\n"),
            "{s}"
        );
        assert!(s.contains("hdr.ethernet.dst_addr"), "{s}");
        let row = s.lines().find(|l| l.contains("02:00:00:00:00:02")).unwrap();
        assert!(row.contains("set_port(port=1)"), "{s}");
        assert!(s.ends_with("default: flood(mgid=1)\n"), "{s}");
    }

    #[test]
    fn a_listing_of_a_table_with_idle_timeouts_shows_ttl_and_unhit_time() {
        let r = json!({"ok": true, "table": "SwitchIngress.flows", "hits": 1, "misses": 0,
            "entries": [
                {"key": {"hdr.ipv4.dst_addr": "10.0.0.1"}, "priority": null, "action": "fwd",
                 "params": {"port": "1"}, "ttl_ms": 100, "idle_ms": 250, "idle": true},
                {"key": {"hdr.ipv4.dst_addr": "10.0.0.2"}, "priority": null, "action": "fwd",
                 "params": {"port": "2"}, "ttl_ms": 0, "idle_ms": 3, "idle": false}],
            "default": {"action": "NoAction", "params": {}}});
        let s = table_list(&r);
        assert!(s.contains("TTL MS") && s.contains("UNHIT MS"), "{s}");
        let row = |ip: &str| s.lines().find(|l| l.contains(ip)).unwrap().to_string();
        assert!(row("10.0.0.1").contains("250 (idle)"), "{s}");
        assert!(
            row("10.0.0.2").contains(" - ") && !row("10.0.0.2").contains("idle"),
            "{s}"
        );
    }

    #[test]
    fn stats_show_a_row_per_port_and_only_nonzero_faults() {
        let zero = json!({"lost": 0, "duplicated": 0});
        let r = json!({"ok": true, "processed": 7, "no_port": 0, "switch_drops": {"ingress_drop_ctl": 2},
            "threads": [{"pipe": 0}],
            "ports": [{"port": 0, "name": "veth0", "rx": 5, "rx_bytes": 320, "tx": 3,
                       "tx_bytes": 192, "drops": 0, "faults_tx": {"lost": 2, "duplicated": 0},
                       "faults_rx": zero}]});
        let s = stats(&r);
        let row = s.lines().find(|l| l.contains("veth0")).unwrap();
        assert!(
            row.contains("320") && row.contains("tx: lost 2; rx: none"),
            "{s}"
        );
        assert!(s.contains("switch drops: ingress_drop_ctl 2"), "{s}");
        assert!(
            !s.contains("PIPE THREAD"),
            "one thread: no thread table\n{s}"
        );
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn link_settings_read_as_words() {
        let cfg: dataplane::LinkConfig = "rate=1G,delay=50us,rx.loss=0.01".parse().unwrap();
        let r = json!({"ok": true, "port": 1, "settings": serde_json::to_value(&cfg).unwrap(),
            "faults_tx": {"lost": 0}, "faults_rx": {"lost": 3}});
        let s = link(&r);
        assert!(s.contains("  sends:    1 Gbit/s, delay 50 us\n"), "{s}");
        assert!(
            s.contains("  receives: 1 Gbit/s, delay 50 us, loss 1%\n"),
            "{s}"
        );
        assert!(s.contains("sent: none; received: lost 3"), "{s}");
    }
}
