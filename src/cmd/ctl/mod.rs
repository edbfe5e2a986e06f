//! `pisa ctl`: talk to a running `pisa run --ctl PATH` (or a lab switch) over its Unix control
//! socket. The server and the protocol (ops, fields, answers) are
//! [`control::server`]'s; this is the client. Answers print as tables and lines
//! ([`render`]), or as the JSON reply with `--json`.

mod render;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::{Args, Subcommand};
use serde_json::{json, Value as Json};

/// `pisa ctl`: the client.
#[derive(Args, Debug)]
pub struct CtlArgs {
    /// The control socket of a running `pisa run --ctl PATH`.
    #[arg(long, default_value = "/run/pisa/ctl.sock")]
    pub socket: PathBuf,
    /// Wait up to this many seconds for the socket to accept a connection (a switch that was
    /// just started in the background), instead of failing at once.
    #[arg(long, value_name = "SECS", default_value_t = 0.0, value_parser = crate::cmd::seconds)]
    pub wait: f64,
    /// Print the switch's JSON reply as it is (for scripts) instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: CtlCommand,
}

/// A table entry on the command line.
#[derive(Args, Debug)]
pub struct EntryArgs {
    /// The table (`SwitchIngress.mac_dst`, or a unique suffix such as `mac_dst`).
    table: String,
    /// A key field and its match, as `pisa ctl table-list` prints it: `hdr.ipv4.dst_addr=10.0.0.0/8`
    /// (LPM), `VALUE &&& MASK` (ternary), `LO..HI` (range), a MAC, IPv4/IPv6 or number (repeat per field).
    #[arg(short = 'k', long = "key", value_name = "FIELD=VALUE")]
    key: Vec<String>,
    /// The action to run on a hit.
    #[arg(short = 'a', long, required_unless_present_any = ["member", "group"], conflicts_with_all = ["member", "group"])]
    action: Option<String>,
    /// In a table with an action profile: the member the entry points at (table-add only).
    #[arg(long, conflicts_with = "group")]
    member: Option<u32>,
    /// In a table with an action selector: the group the entry points at (table-add only).
    #[arg(long)]
    group: Option<u32>,
    /// An action parameter (repeat per parameter).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Priority of a ternary or range entry (as BfRt's $MATCH_PRIORITY: a smaller number wins).
    #[arg(long)]
    priority: Option<u32>,
    /// The entry's idle timeout in ms (BfRt's $ENTRY_TTL), in a table declared with
    /// `idle_timeout = true`: `table-list` shows how long each entry has not been hit and
    /// marks it idle past its TTL. 0: never ages.
    #[arg(long, value_name = "MS")]
    ttl_ms: Option<u64>,
}

#[derive(Subcommand, Debug)]
pub enum CtlCommand {
    /// Per-port and switch statistics.
    Stats,
    /// Read an indexed counter cell.
    Counter {
        /// The counter (full name or a unique suffix).
        name: String,
        /// The cell.
        index: u32,
        /// Only this pipe (default: every pipe, one row each).
        #[arg(long)]
        pipe: Option<u16>,
    },
    /// Read a register cell.
    Register {
        /// The register (full name or a unique suffix).
        name: String,
        /// The cell.
        index: u32,
        /// Only this pipe (default: every pipe, one row each).
        #[arg(long)]
        pipe: Option<u16>,
    },
    /// Read a meter's byte count adjustment and, given an index, that cell's rates (in the
    /// meter's unit: bytes or packets, per second for CIR/PIR).
    Meter {
        /// The meter (full name or a unique suffix), or a direct meter's table.
        name: String,
        /// The cell whose rates to show (an indexed meter).
        index: Option<u32>,
        /// Only this pipe (default: every pipe, one row each).
        #[arg(long)]
        pipe: Option<u16>,
    },
    /// Add a table entry: `pisa ctl table-add T -k FIELD=VALUE -a ACTION -p NAME=VALUE`.
    TableAdd(EntryArgs),
    /// Delete a table entry by its key.
    TableDelete {
        /// The table.
        table: String,
        /// A key field and its match, as in table-add (repeat per field).
        #[arg(short = 'k', long = "key", value_name = "FIELD=VALUE")]
        key: Vec<String>,
        /// Priority of the ternary or range entry to delete.
        #[arg(long)]
        priority: Option<u32>,
    },
    /// Change an existing entry's action and data (same arguments as table-add).
    TableModify(EntryArgs),
    /// List a table's entries, its default action and its hit/miss counts.
    TableList {
        /// The table.
        table: String,
    },
    /// Apply a table-state file (tables, registers, mirror, multicast, port queues) while
    /// running: the same YAML as `pisa run --tables`.
    Apply {
        /// The table-state YAML file (format: docs/tables-file.md).
        file: PathBuf,
    },
    /// A port's egress queue counters (enqueued, dropped, ECN-marked, deepest backlog).
    Queue {
        /// The device port.
        port: u16,
    },
    /// Show a port's link settings and fault counters.
    LinkGet {
        /// The device port.
        port: u16,
    },
    /// Replace a port's link settings, e.g. `rate=10G,delay=5us,loss=0.01` (empty: a clean link).
    LinkSet {
        /// The device port.
        port: u16,
        /// The settings (`tx.`/`rx.` prefixes for one direction).
        settings: String,
    },
    /// Take a port's link down.
    LinkDown {
        /// The device port.
        port: u16,
    },
    /// Bring a port's link up.
    LinkUp {
        /// The device port.
        port: u16,
    },
    /// Add a member to an action profile (or change it): `member-set PROFILE ID -a ACTION -p NAME=VALUE`.
    MemberSet {
        /// The action profile (or its selector).
        profile: String,
        /// The member id.
        id: u32,
        /// The member's action.
        #[arg(short = 'a', long)]
        action: String,
        /// An action parameter (repeat per parameter).
        #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
    },
    /// Remove a member (refused while an entry or a group uses it).
    MemberDelete {
        /// The action profile (or its selector).
        profile: String,
        /// The member id.
        id: u32,
    },
    /// Create a selector group with these members, or replace its members.
    GroupSet {
        /// The action selector (or its profile).
        profile: String,
        /// The group id.
        id: u32,
        /// Member ids.
        members: Vec<u32>,
    },
    /// Remove a group (refused while an entry uses it).
    GroupDelete {
        /// The action selector (or its profile).
        profile: String,
        /// The group id.
        id: u32,
    },
    /// An action profile's members and groups.
    ProfileList {
        /// The action profile (or its selector).
        profile: String,
    },
    /// Set a meter's byte count adjustment: signed bytes added to every packet's length
    /// before a byte meter updates (-8192..=8191; BfRt's `MeterByteCountAdjust`).
    MeterAdjust {
        /// The meter (indexed or direct), or the table of a direct meter.
        meter: String,
        /// The bytes, e.g. 20 (preamble and inter-frame gap; the FCS is
        /// already counted) or -12.
        #[arg(allow_negative_numbers = true)]
        bytes: i32,
        /// Only this pipe (default: every pipe).
        #[arg(long)]
        pipe: Option<u16>,
    },
    /// Add an entry to a parser value set (`value_set<T>(size)`).
    ValueSetAdd {
        /// The value set, e.g. `vxlan_ports` or `SwitchIngressParser.vxlan_ports`.
        set: String,
        /// The entry: one match text for a one-field set (`4789`, `0x12b0 &&& 0xfff0`), or
        /// FIELD=TEXT per field of a struct-typed set.
        #[arg(required = true)]
        fields: Vec<String>,
    },
    /// Remove an entry from a parser value set (written as it was added).
    ValueSetDelete {
        /// The value set.
        set: String,
        /// The entry, as for value-set-add.
        #[arg(required = true)]
        fields: Vec<String>,
    },
    /// A parser value set's entries.
    ValueSetList {
        /// The value set.
        set: String,
    },
    /// Send one raw JSON request line and print the JSON reply.
    Raw {
        /// The request, e.g. `{"op": "stats"}` (each verb above sends one such line). Not
        /// named `json`: that is the global `--json` flag's id.
        #[arg(value_name = "JSON")]
        request: String,
    },
}

fn pairs(items: &[String], what: &str) -> anyhow::Result<serde_json::Map<String, Json>> {
    items
        .iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| anyhow!("{what} {kv:?}: expected NAME=VALUE"))?;
            Ok((k.to_string(), Json::String(v.to_string())))
        })
        .collect()
}

fn request_of(c: &CtlCommand) -> anyhow::Result<String> {
    let v = match c {
        CtlCommand::Stats => json!({"op": "stats"}),
        CtlCommand::Counter { name, index, pipe } => {
            json!({"op": "counter_read", "name": name, "index": index, "pipe": pipe})
        }
        CtlCommand::Register { name, index, pipe } => {
            json!({"op": "register_read", "name": name, "index": index, "pipe": pipe})
        }
        CtlCommand::Meter { name, index, pipe } => {
            json!({"op": "meter_read", "name": name, "index": index, "pipe": pipe})
        }
        CtlCommand::TableAdd(e) | CtlCommand::TableModify(e) => entry_request(c, e)?,
        CtlCommand::MemberSet {
            profile,
            id,
            action,
            params,
        } => apply_json(json!({"action_profiles": [{"profile": profile, "members": [
            {"id": id, "action": action, "params": pairs(params, "--param")?}
        ]}]})),
        CtlCommand::GroupSet {
            profile,
            id,
            members,
        } => apply_json(json!({"action_profiles": [{"profile": profile, "groups": [
            {"id": id, "members": members}
        ]}]})),
        CtlCommand::MemberDelete { profile, id } => {
            json!({"op": "member_delete", "profile": profile, "id": id})
        }
        CtlCommand::GroupDelete { profile, id } => {
            json!({"op": "group_delete", "profile": profile, "id": id})
        }
        CtlCommand::ProfileList { profile } => json!({"op": "profile_read", "profile": profile}),
        CtlCommand::MeterAdjust { meter, bytes, pipe } => apply_json(json!({"meters": [
            {"meter": meter, "byte_count_adjust": bytes, "pipe": pipe},
        ]})),
        CtlCommand::ValueSetAdd { set, fields } => {
            let entry = match &fields[..] {
                [one] if !one.contains('=') => Json::String(one.clone()),
                _ => Json::Object(pairs(fields, "field")?),
            };
            apply_json(json!({"value_sets": [{"value_set": set, "entries": [entry]}]}))
        }
        CtlCommand::ValueSetDelete { set, fields } => {
            let named = match &fields[..] {
                [one] if !one.contains('=') => {
                    serde_json::Map::from_iter([(String::new(), Json::String(one.clone()))])
                }
                _ => pairs(fields, "field")?,
            };
            json!({"op": "value_set_delete", "set": set, "fields": named})
        }
        CtlCommand::ValueSetList { set } => json!({"op": "value_set_read", "set": set}),
        CtlCommand::TableDelete {
            table,
            key,
            priority,
        } => json!({
            "op": "table_delete", "table": table, "key": pairs(key, "--key")?, "priority": priority,
        }),
        CtlCommand::TableList { table } => json!({"op": "table_list", "table": table}),
        CtlCommand::Apply { file } => {
            let yaml = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read `{}`", file.display()))?;
            json!({"op": "apply", "yaml": yaml})
        }
        CtlCommand::Queue { port } => json!({"op": "queue_get", "port": port}),
        CtlCommand::LinkGet { port } => json!({"op": "link_get", "port": port}),
        CtlCommand::LinkSet { port, settings } => {
            json!({"op": "link_set", "port": port, "settings": settings})
        }
        CtlCommand::LinkDown { port } => json!({"op": "link_down", "port": port}),
        CtlCommand::LinkUp { port } => json!({"op": "link_up", "port": port}),
        CtlCommand::Raw { request } => return Ok(request.trim().to_string()),
    };
    Ok(v.to_string())
}

/// A table-state document sent as an `apply` request (JSON is YAML too): member, group and
/// member/group-entry writes take the table-file path, so they are read and checked once.
fn apply_json(doc: Json) -> Json {
    json!({"op": "apply", "yaml": doc.to_string()})
}

/// `table-add` / `table-modify`: an entry with an action, or (add only) a member or group.
fn entry_request(c: &CtlCommand, e: &EntryArgs) -> anyhow::Result<Json> {
    let add = matches!(c, CtlCommand::TableAdd(_));
    let key = pairs(&e.key, "--key")?;
    if let Some(action) = &e.action {
        let op = if add { "table_add" } else { "table_modify" };
        return Ok(json!({
            "op": op, "table": e.table, "key": key,
            "action": action, "params": pairs(&e.params, "--param")?, "priority": e.priority,
            "ttl_ms": e.ttl_ms,
        }));
    }
    if !add {
        return Err(anyhow!(
            "table-modify takes an action; to point an entry at another member or group, delete it and add it again"
        ));
    }
    if !e.params.is_empty() {
        return Err(anyhow!(
            "--param belongs to the member (member-set), not to an entry that points at one"
        ));
    }
    let mut entry = json!({"key": key, "priority": e.priority, "ttl_ms": e.ttl_ms});
    if let Some(m) = e.member {
        entry["member"] = json!(m);
    }
    if let Some(g) = e.group {
        entry["group"] = json!(g);
    }
    Ok(apply_json(
        json!({"tables": [{"table": e.table, "entries": [entry]}]}),
    ))
}

/// Sends one request and returns the reply line.
pub fn request(socket: &Path, line: &str) -> anyhow::Result<Json> {
    let mut s = UnixStream::connect(socket).with_context(|| {
        format!(
            "cannot connect to `{}`; is `pisa run --ctl {}` running?",
            socket.display(),
            socket.display()
        )
    })?;
    if line.len() > control::server::MAX_LINE {
        anyhow::bail!(
            "the request is {} bytes; the control socket takes lines of at most {} bytes",
            line.len(),
            control::server::MAX_LINE
        );
    }
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    // A server that refuses the connection (too many open) answers and closes at once, so
    // the write may fail: its answer still says why.
    let sent = writeln!(s, "{line}");
    let mut r = BufReader::new(s);
    let mut reply = String::new();
    let read = r.read_line(&mut reply);
    if reply.trim().is_empty() {
        sent.context("cannot send the request to the control socket")?;
        read.context("no answer from the control socket")?;
        anyhow::bail!("the control socket closed the connection without an answer");
    }
    serde_json::from_str(&reply).with_context(|| format!("bad answer {reply:?}"))
}

/// Waits until `socket` accepts a connection or `secs` have passed (then the request's own
/// error says what is wrong).
fn wait_for(socket: &Path, secs: f64) {
    let deadline = std::time::Instant::now() + Duration::from_secs_f64(secs.max(0.0));
    while std::time::Instant::now() < deadline && UnixStream::connect(socket).is_err() {
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn run(args: CtlArgs) -> anyhow::Result<ExitCode> {
    let line = request_of(&args.command)?;
    wait_for(&args.socket, args.wait);
    let reply = request(&args.socket, &line)?;
    let ok = reply.get("ok") == Some(&Json::Bool(true));
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&reply).unwrap_or_else(|_| reply.to_string())
        );
    } else if ok {
        print!("{}", render::human(&args.command, &reply));
    } else {
        let msg = reply.get("error").map(|e| match e {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        });
        eprintln!("error: {}", msg.unwrap_or_else(|| reply.to_string()));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `meter-adjust` sends a table file with one `meters:` item, which the server's reader takes.
    #[test]
    fn meter_adjust_is_a_meters_item() {
        let line = request_of(&CtlCommand::MeterAdjust {
            meter: "SwitchIngress.meter".into(),
            bytes: -12,
            pipe: None,
        })
        .unwrap();
        let v: Json = serde_json::from_str(&line).unwrap();
        assert_eq!(v["op"], "apply");
        let f = control::tables_file::from_yaml(v["yaml"].as_str().unwrap()).unwrap();
        let m = &f.meters[0].item;
        assert_eq!(m.meter.as_deref(), Some("SwitchIngress.meter"));
        assert_eq!((m.byte_count_adjust, m.pipe), (Some(-12), None));
    }

    #[test]
    fn client_requests_are_built_from_the_command_line() {
        let line = request_of(&CtlCommand::TableAdd(EntryArgs {
            table: "t".into(),
            key: vec!["a=1".into()],
            action: Some("x".into()),
            member: None,
            group: None,
            params: vec!["p=0x2".into()],
            priority: Some(3),
            ttl_ms: Some(250),
        }))
        .unwrap();
        let v: Json = serde_json::from_str(&line).unwrap();
        assert_eq!(v["op"], "table_add");
        assert_eq!(v["key"]["a"], "1");
        assert_eq!(v["params"]["p"], "0x2");
        assert_eq!(v["priority"], 3);
        assert_eq!(v["ttl_ms"], 250);
        let v: Json = serde_json::from_str(
            &request_of(&CtlCommand::TableList { table: "t".into() }).unwrap(),
        )
        .unwrap();
        assert_eq!(v, json!({"op": "table_list", "table": "t"}));
        let e = request_of(&CtlCommand::Apply {
            file: "/nonexistent/x.yaml".into(),
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/x.yaml"), "{e:#}");
        assert!(request_of(&CtlCommand::TableDelete {
            table: "t".into(),
            key: vec!["novalue".into()],
            priority: None,
        })
        .is_err());
    }

    /// Member, group and member/group-entry writes go as table-file documents (`apply`).
    #[test]
    fn profile_writes_are_table_files() {
        let v: Json = serde_json::from_str(
            &request_of(&CtlCommand::GroupSet {
                profile: "sel".into(),
                id: 10,
                members: vec![1, 2],
            })
            .unwrap(),
        )
        .unwrap();
        assert_eq!(v["op"], "apply");
        let doc = control::tables_file::from_yaml(v["yaml"].as_str().unwrap()).unwrap();
        assert_eq!(doc.action_profiles[0].groups[0].item.members, vec![1, 2]);
        let add = CtlCommand::TableAdd(EntryArgs {
            table: "t".into(),
            key: vec!["a=1".into()],
            action: None,
            member: None,
            group: Some(10),
            params: Vec::new(),
            priority: None,
            ttl_ms: None,
        });
        let v: Json = serde_json::from_str(&request_of(&add).unwrap()).unwrap();
        let doc = control::tables_file::from_yaml(v["yaml"].as_str().unwrap()).unwrap();
        assert_eq!(doc.tables[0].entries[0].item.group, Some(10));
    }

    /// Value set adds go as table files; deletes name the fields (`""` for a one-field set),
    /// and the server reads both.
    #[test]
    fn value_set_requests() {
        use control::tables_file::model::ValueSetItem;
        let add = |fields: &[&str]| {
            let line = request_of(&CtlCommand::ValueSetAdd {
                set: "vs".into(),
                fields: fields.iter().map(|f| f.to_string()).collect(),
            })
            .unwrap();
            let v: Json = serde_json::from_str(&line).unwrap();
            control::tables_file::from_yaml(v["yaml"].as_str().unwrap()).unwrap()
        };
        let doc = add(&["0x12b0 &&& 0xfff0"]);
        assert_eq!(
            doc.value_sets[0].entries[0].item,
            ValueSetItem::One("0x12b0 &&& 0xfff0".into())
        );
        let doc = add(&["proto=17", "port=4789"]);
        let ValueSetItem::Fields(m) = &doc.value_sets[0].entries[0].item else {
            panic!("{doc:?}");
        };
        assert_eq!(m["port"].as_str(), "4789");
        let line = request_of(&CtlCommand::ValueSetDelete {
            set: "vs".into(),
            fields: vec!["5".into()],
        })
        .unwrap();
        let req = control::ctl::Request::parse(&line).unwrap();
        assert_eq!(req.op(), "value_set_delete");
        assert!(req.is_write());
    }
}
