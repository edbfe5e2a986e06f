//! Entry points for the fuzz targets (`fuzz/targets/src/control_*.rs`): arbitrary bytes as an
//! STF script, a table file or a control-socket request line, read and their values parsed for
//! every match kind. Must never
//! panic; the return value only keeps the work from being optimised away.

use pipeline::ir::MatchKind;

use crate::value;

const KINDS: [MatchKind; 4] = [
    MatchKind::Exact,
    MatchKind::Ternary,
    MatchKind::Lpm,
    MatchKind::Range,
];

fn values(text: &str) -> usize {
    let mut n = 0;
    for width in [1, 9, 16, 32, 48, 128] {
        n += usize::from(value::parse_value(text, width).is_ok());
        for k in KINDS {
            match value::parse_key_match(text, k, width) {
                Ok(_) => n += 1,
                Err(e) => n += e.to_string().len(),
            }
        }
    }
    n
}

/// Reads `data` as an STF script and every key/argument value in it.
pub fn stf(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match crate::stf::parse(&text) {
        Err(e) => e.to_string().len(),
        Ok(stmts) => {
            let mut n = stmts.len();
            for s in &stmts {
                match &s.stmt {
                    crate::stf::Stmt::Add { keys, action, .. } => {
                        for a in keys.iter().chain(&action.args) {
                            n += values(&a.value);
                        }
                    }
                    crate::stf::Stmt::Expect {
                        pattern: Some(p), ..
                    } => {
                        n += p.diff(data).len() + usize::from(p.matches(data));
                    }
                    _ => {}
                }
            }
            n
        }
    }
}

/// Reads `data` as a table file and every key, parameter and register value in it.
pub fn tables_file(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match crate::tables_file::from_yaml(&text) {
        Err(e) => e.to_string().len(),
        Ok(f) => {
            let mut n = 0;
            for t in &f.tables {
                for e in &t.entries {
                    for v in e.item.key.values().chain(e.item.params.values()) {
                        n += values(v.as_str());
                    }
                }
            }
            for r in &f.registers {
                for v in [&r.item.value, &r.item.lo, &r.item.hi]
                    .into_iter()
                    .flatten()
                {
                    n += values(v.as_str());
                }
            }
            n
        }
    }
}

/// Reads `data` as a control-socket request line ([`crate::ctl`]) and every key, parameter and
/// table-file value in it.
pub fn ctl_request(data: &[u8]) -> usize {
    use crate::ctl::{texts, Request};
    let text = String::from_utf8_lossy(data);
    match Request::parse(&text) {
        Err(e) => e.to_string().len(),
        Ok(req) => {
            let mut n = req.op().len() + usize::from(req.is_write());
            let maps = match &req {
                Request::TableAdd(e) | Request::TableModify(e) => vec![&e.key, &e.params],
                Request::TableDelete { key, .. } => vec![key],
                Request::Apply { yaml } => {
                    n += tables_file(yaml.as_bytes());
                    Vec::new()
                }
                _ => Vec::new(),
            };
            for m in maps {
                match texts(m) {
                    Err(e) => n += e.len(),
                    Ok(t) => {
                        for v in t.values() {
                            n += values(v.as_str());
                        }
                    }
                }
            }
            n
        }
    }
}

/// l2l3.p4 compiled once, with its P4Runtime schema, for [`p4runtime_request`].
fn l2l3() -> &'static (
    std::sync::Arc<pipeline::ir::Program>,
    crate::p4runtime::schema::Schema,
) {
    static P: std::sync::OnceLock<(
        std::sync::Arc<pipeline::ir::Program>,
        crate::p4runtime::schema::Schema,
    )> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let src = include_str!("../../p4/programs/l2l3.p4");
        let p = crate::p4runtime::p4info::compile_source(
            "l2l3.p4",
            src,
            &p4::compile::CompileOptions::default(),
        )
        .expect("l2l3.p4 compiles");
        let schema = crate::p4runtime::schema::Schema::new(&p.p4info);
        (std::sync::Arc::new(p.program), schema)
    })
}

/// Reads `data` as a P4Runtime Write, Read and StreamChannel request (protobuf), checks every
/// update and read entity against l2l3.p4's P4Info, applies the writes and answers the reads
/// on a switch running l2l3.p4, and turns packet-outs into frames and frames into packet-ins
/// (with a 16-bit controller header).
pub fn p4runtime_request(data: &[u8]) -> usize {
    use crate::p4runtime::proto::p4::v1 as p4v1;
    use crate::p4runtime::{device, packet_io, request, schema::HeaderInfo};
    use prost::Message;
    thread_local! {
        static SW: std::cell::RefCell<Option<pipeline::switch::Switch>> =
            const { std::cell::RefCell::new(None) };
    }
    let (prog, schema) = l2l3();
    let mut n = 0;
    if let Ok(w) = p4v1::WriteRequest::decode(data) {
        SW.with(|sw| {
            let mut sw = sw.borrow_mut();
            let sw = sw.get_or_insert_with(|| {
                pipeline::switch::Switch::new(
                    prog.clone(),
                    pipeline::switch::SwitchConfig::new(4).with_cpu_port(64),
                )
                .expect("l2l3.p4 builds")
            });
            for u in &w.updates {
                match request::update_op(schema, u) {
                    Ok(op) => match device::apply(sw, &op) {
                        Ok(()) => n += 1,
                        Err(e) => n += e.message.len(),
                    },
                    Err(e) => n += e.message.len(),
                }
            }
        });
    }
    if let Ok(r) = p4v1::ReadRequest::decode(data) {
        SW.with(|sw| {
            if let Some(sw) = sw.borrow().as_ref() {
                for e in &r.entities {
                    match request::read_query(schema, e) {
                        Ok(qs) => {
                            for q in qs {
                                n += device::read(sw, 0xf, schema, &q, 0).map_or(1, |v| v.len());
                            }
                        }
                        Err(e) => n += e.message.len(),
                    }
                }
            }
        });
    }
    let hdr = HeaderInfo {
        id: 1,
        fields: vec![(1, "port".into(), 9), (2, "pad".into(), 7)],
    };
    if let Ok(s) = p4v1::StreamMessageRequest::decode(data) {
        if let Some(p4v1::stream_message_request::Update::Packet(p)) = s.update {
            n += packet_io::packet_out_frame(Some(&hdr), &p.payload, &p.metadata)
                .map_or(1, |f| f.len());
        }
    }
    n + packet_io::packet_in(Some(&hdr), data).map_or(0, |(p, m)| p.len() + m.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn p4runtime_requests_never_panic() {
        use crate::p4runtime::proto::p4::v1 as p4v1;
        use prost::Message;
        // A real insert (an lpm route) and its read, then some truncations and garbage.
        let (_, schema) = super::l2l3();
        let (&table_id, t) = schema
            .tables
            .iter()
            .find(|(_, t)| t.name == "SwitchIngress.ipv4_lpm")
            .unwrap();
        let action_id = schema.action_ids["SwitchIngress.set_nexthop"];
        let entry = p4v1::TableEntry {
            table_id,
            r#match: vec![p4v1::FieldMatch {
                field_id: t.fields[0].id,
                field_match_type: Some(p4v1::field_match::FieldMatchType::Lpm(
                    p4v1::field_match::Lpm {
                        value: vec![10, 0, 0, 0],
                        prefix_len: 8,
                    },
                )),
            }],
            action: Some(p4v1::TableAction {
                r#type: Some(p4v1::table_action::Type::Action(p4v1::Action {
                    action_id,
                    params: vec![p4v1::action::Param {
                        param_id: 1,
                        value: vec![1],
                    }],
                })),
            }),
            ..Default::default()
        };
        let w = p4v1::WriteRequest {
            updates: vec![p4v1::Update {
                r#type: 1,
                entity: Some(p4v1::Entity {
                    entity: Some(p4v1::entity::Entity::TableEntry(entry)),
                }),
            }],
            ..Default::default()
        }
        .encode_to_vec();
        assert!(super::p4runtime_request(&w) > 0);
        for cut in 0..w.len() {
            let _ = super::p4runtime_request(&w[..cut]);
        }
        let mut flipped = w.clone();
        for i in 0..flipped.len() {
            flipped[i] ^= 0x5a;
            let _ = super::p4runtime_request(&flipped);
        }
        let _ = super::p4runtime_request(&[0xff; 64]);
    }

    proptest::proptest! {
        #[test]
        fn tables_file_never_panics(s in "[ a-z0-9:{}\\[\\],.&*/\n_-]{0,120}") {
            let _ = super::tables_file(s.as_bytes());
        }

        #[test]
        fn stf_never_panics(s in "\\PC{0,120}") {
            let _ = super::stf(s.as_bytes());
        }

        #[test]
        fn ctl_requests_never_panic(
            s in r#"\{"op": ?"(table_add|table_modify|table_delete|apply|stats)"(, ?"[a-z]{1,6}": ?("[ -~]{0,16}"|[0-9]{1,4}|\{("[a-z.]{1,8}": ?("[0-9a-f:./&*]{0,20}"|[0-9]{1,3}|true|null))?\}))*\}"#
        ) {
            let _ = super::ctl_request(s.as_bytes());
        }
    }

    #[test]
    fn entry_points_take_any_bytes() {
        assert!(super::stf(b"add t k:0x**01 a(p:1)\nexpect 1 0*\n") > 0);
        assert!(super::stf(&[0xff, 0xfe, b'\n', b'#']) > 0);
        assert!(
            super::tables_file(b"tables:\n - {table: t, entries: [{key: {k: 1/2}, action: a}]}\n")
                > 0
        );
        assert!(super::tables_file(b"\xff: [") > 0);
    }
}
