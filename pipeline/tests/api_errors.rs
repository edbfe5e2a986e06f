//! The runtime API refuses bad requests with a typed error naming the culprit.

mod common;

use common::*;
use pipeline::api::{ApiError, PipeSel};
use pipeline::ir::{KeyMatch, MatchKind, Value};
use pipeline::switch::{Switch, SwitchConfig};

fn sw() -> Switch {
    let (prog, _) = l2_program(Options::default());
    Switch::new(prog, SwitchConfig::new(1)).unwrap()
}

fn key(v: Value) -> [(&'static str, KeyMatch); 1] {
    [("hdr.ethernet.dst_addr", KeyMatch::Exact(v))]
}

#[test]
fn unknown_table_suggests() {
    let e = sw()
        .table_add(
            PipeSel::All,
            "forwrd",
            &key(1),
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    match &e {
        ApiError::Unknown {
            kind, suggestions, ..
        } => {
            assert_eq!(*kind, "table");
            assert_eq!(suggestions[0], "SwitchIngress.forward");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string().contains("did you mean SwitchIngress.forward"),
        "{e}"
    );
}

#[test]
fn unknown_key_and_wrong_kind_and_too_wide() {
    let mut s = sw();
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &[("hdr.ethernet.dst", KeyMatch::Exact(1))],
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::UnknownKey { suggestions, .. } if suggestions[0] == "hdr.ethernet.dst_addr"),
        "{e:?}"
    );
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &[(
                "hdr.ethernet.dst_addr",
                KeyMatch::Lpm {
                    value: 1,
                    prefix_len: 8,
                },
            )],
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            ApiError::KeyKind {
                expected: MatchKind::Exact,
                got: MatchKind::Lpm,
                ..
            }
        ),
        "{e:?}"
    );
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &key(1 << 48),
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(
        matches!(e, ApiError::ValueTooWide { width: 48, .. }),
        "{e:?}"
    );
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &[],
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(matches!(e, ApiError::MissingKey { .. }), "{e:?}");
}

#[test]
fn action_and_param_errors() {
    let mut s = sw();
    let e = s
        .table_add(PipeSel::All, "forward", &key(1), None, "route", &[])
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::ActionNotInTable { available, .. } if available.contains(&"SwitchIngress.set_port".to_string())),
        "{e:?}"
    );
    let e = s
        .table_add(PipeSel::All, "forward", &key(1), None, "set_port", &[])
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::MissingParam { param, .. } if param == "port"),
        "{e:?}"
    );
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &key(1),
            None,
            "set_port",
            &[("prot", 1)],
        )
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::UnknownParam { suggestions, .. } if suggestions == &["port"]),
        "{e:?}"
    );
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &key(1),
            None,
            "set_port",
            &[("port", 512)],
        )
        .unwrap_err();
    assert!(
        matches!(e, ApiError::ValueTooWide { width: 9, .. }),
        "{e:?}"
    );
}

#[test]
fn defaultonly_tableonly_const_rules() {
    let mut s = sw();
    let e = s
        .table_add(
            PipeSel::All,
            "acl",
            &[("hdr.ethernet.ether_type", KeyMatch::Exact(1))],
            Some(1),
            "NoAction",
            &[],
        )
        .unwrap_err();
    assert!(matches!(e, ApiError::DefaultOnly { .. }), "{e:?}");
    let e = s
        .table_add(
            PipeSel::All,
            "resub",
            &[("hdr.ethernet.ether_type", KeyMatch::Exact(1))],
            None,
            "do_resubmit",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(matches!(e, ApiError::ConstTable { .. }), "{e:?}");
    let e = s
        .table_set_default(PipeSel::All, "portcount", "count_port", &[])
        .unwrap_err();
    assert!(matches!(e, ApiError::ConstDefault { .. }), "{e:?}");
    // const entries are there.
    assert_eq!(s.table_entries(PipeSel::All, "resub").unwrap().len(), 1);
}

#[test]
fn duplicate_missing_and_full() {
    let mut s = sw();
    s.table_add(
        PipeSel::All,
        "forward",
        &key(1),
        None,
        "set_port",
        &[("port", 1)],
    )
    .unwrap();
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &key(1),
            None,
            "set_port",
            &[("port", 2)],
        )
        .unwrap_err();
    assert!(matches!(e, ApiError::DuplicateEntry { .. }), "{e:?}");
    let e = s
        .table_delete(PipeSel::All, "forward", &key(2), None)
        .unwrap_err();
    assert!(matches!(e, ApiError::EntryNotFound { .. }), "{e:?}");
    let e = s
        .table_modify(
            PipeSel::All,
            "forward",
            &key(2),
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(matches!(e, ApiError::EntryNotFound { .. }), "{e:?}");
    s.table_modify(
        PipeSel::All,
        "forward",
        &key(1),
        None,
        "set_port",
        &[("port", 9)],
    )
    .unwrap();
    let got = s.table_get(PipeSel::All, "forward", &key(1), None).unwrap();
    assert_eq!(got.params, vec![("port".to_string(), 9)]);
    for i in 2..=1024 {
        s.table_add(
            PipeSel::All,
            "forward",
            &key(i),
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap();
    }
    let e = s
        .table_add(
            PipeSel::All,
            "forward",
            &key(5000),
            None,
            "set_port",
            &[("port", 1)],
        )
        .unwrap_err();
    assert!(
        matches!(e, ApiError::TableFull { capacity: 1024, .. }),
        "{e:?}"
    );
    s.table_delete(PipeSel::All, "forward", &key(1), None)
        .unwrap();
    assert_eq!(s.table_len(PipeSel::All, "forward").unwrap(), 1023);
    s.table_clear(PipeSel::All, "forward").unwrap();
    assert_eq!(s.table_len(PipeSel::All, "forward").unwrap(), 0);
}

#[test]
fn index_and_pipe_errors() {
    let mut s = sw();
    let e = s.register_read(PipeSel::All, "port_pkts", 512).unwrap_err();
    assert!(
        matches!(e, ApiError::IndexOutOfRange { size: 512, .. }),
        "{e:?}"
    );
    let e = s
        .register_write(PipeSel::All, "port_pkts", 0, 1 << 32, None)
        .unwrap_err();
    assert!(
        matches!(e, ApiError::ValueTooWide { width: 32, .. }),
        "{e:?}"
    );
    let e = s
        .register_read(PipeSel::Pipe(3), "port_pkts", 0)
        .unwrap_err();
    assert!(
        matches!(e, ApiError::BadPipe { pipe: 3, pipes: 1 }),
        "{e:?}"
    );
    let e = s
        .counter_read(PipeSel::All, "forward_counter", 0)
        .unwrap_err();
    assert!(
        matches!(
            e,
            ApiError::WrongForm {
                actual: "direct",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "counter SwitchIngress.forward_counter is direct; use the direct form of this request"
    );
    let e = s.mc_node_create(1, 1, &[200], &[]).unwrap_err();
    assert!(matches!(e, ApiError::BadPort { port: 200 }), "{e:?}");
}
