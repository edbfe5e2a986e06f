//! Wire compatibility of pisa's hand-written P4Runtime protocol definitions: every message,
//! field and enum value they declare has the same number, type and label as in the descriptors
//! the PyPI `p4runtime` package ships (the ones p4runtime-shell, finsy and PTF clients use).
//!
//! Needs python3 with `p4runtime` (`pip install p4runtime`; scripts/test.sh installs it in CI).
//! `PISA_PYTHON` names another interpreter (e.g. a virtualenv's).

use std::collections::BTreeMap;
use std::process::Command;

use control::p4runtime::proto::DESCRIPTORS;
use prost::Message;
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};

const DUMP: &str = r#"
import json, sys
from p4.v1 import p4runtime_pb2, p4data_pb2
from p4.config.v1 import p4info_pb2, p4types_pb2
from google.rpc import status_pb2, code_pb2
out = {"messages": {}, "enums": {}}
def enum(e):
    out["enums"][e.full_name] = {v.name: v.number for v in e.values}
def msg(m):
    out["messages"][m.full_name] = {
        f.name: [f.number, f.type, f.message_type.full_name if f.message_type else
                 (f.enum_type.full_name if f.enum_type else ""), f.label]
        for f in m.fields}
    for n in m.nested_types: msg(n)
    for e in m.enum_types: enum(e)
for mod in (p4runtime_pb2, p4data_pb2, p4info_pb2, p4types_pb2, status_pb2, code_pb2):
    for m in mod.DESCRIPTOR.message_types_by_name.values(): msg(m)
    for e in mod.DESCRIPTOR.enum_types_by_name.values(): enum(e)
json.dump(out, sys.stdout)
"#;

type Fields = BTreeMap<String, (i64, i64, String, i64)>;

fn python() -> String {
    std::env::var("PISA_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn walk_msg(
    prefix: &str,
    m: &DescriptorProto,
    out: &mut Vec<(String, Fields)>,
    enums: &mut Vec<(String, EnumDescriptorProto)>,
) {
    let name = format!("{prefix}.{}", m.name());
    let fields = m
        .field
        .iter()
        .map(|f| {
            (
                f.name().to_string(),
                (
                    f.number() as i64,
                    f.r#type() as i64,
                    f.type_name().trim_start_matches('.').to_string(),
                    f.label() as i64,
                ),
            )
        })
        .collect();
    out.push((name.clone(), fields));
    for n in &m.nested_type {
        walk_msg(&name, n, out, enums);
    }
    for e in &m.enum_type {
        enums.push((format!("{name}.{}", e.name()), e.clone()));
    }
}

#[test]
#[ignore = "needs python3 with the PyPI p4runtime package (pip install p4runtime; CI installs it)"]
fn hand_written_protos_match_the_p4runtime_package() {
    let run = Command::new(python())
        .args(["-c", DUMP])
        .output()
        .expect("cannot run python3");
    assert!(
        run.status.success(),
        "python3 could not load the p4runtime package's descriptors (pip install p4runtime): {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let theirs: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let fds = FileDescriptorSet::decode(DESCRIPTORS).unwrap();
    let mut msgs = Vec::new();
    let mut enums = Vec::new();
    for f in fds
        .file
        .iter()
        .filter(|f| !f.package().starts_with("google.protobuf"))
    {
        for m in &f.message_type {
            walk_msg(f.package(), m, &mut msgs, &mut enums);
        }
        for e in &f.enum_type {
            enums.push((format!("{}.{}", f.package(), e.name()), e.clone()));
        }
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    for (name, fields) in &msgs {
        let Some(their) = theirs["messages"].get(name) else {
            problems.push(format!("message {name} is not in the package"));
            continue;
        };
        for (field, ours) in fields {
            let Some(t) = their.get(field) else {
                problems.push(format!("{name}.{field} is not in the package"));
                continue;
            };
            let t = (
                t[0].as_i64().unwrap(),
                t[1].as_i64().unwrap(),
                t[2].as_str().unwrap().to_string(),
                t[3].as_i64().unwrap(),
            );
            if &t != ours {
                problems.push(format!("{name}.{field}: ours {ours:?}, theirs {t:?}"));
            }
            checked += 1;
        }
    }
    for (name, e) in &enums {
        let Some(their) = theirs["enums"].get(name) else {
            problems.push(format!("enum {name} is not in the package"));
            continue;
        };
        for v in &e.value {
            if their.get(v.name()).and_then(|n| n.as_i64()) != Some(v.number() as i64) {
                problems.push(format!(
                    "{name}.{} = {}: theirs {:?}",
                    v.name(),
                    v.number(),
                    their.get(v.name())
                ));
            }
            checked += 1;
        }
    }
    assert!(
        problems.is_empty(),
        "{} mismatch(es):\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(
        checked > 300,
        "only {checked} fields and values were compared"
    );
    eprintln!(
        "{} messages, {} enums, {checked} fields and values match",
        msgs.len(),
        enums.len()
    );
}
