//! Table files applied to a real switch running the hand-built program of `common`: every
//! section lands through the runtime API, and every refusal names the file position, the
//! entry and the reason.

mod common;

use control::tables_file::{self, ApplyError, TablesFileError};
use pipeline::api::PipeSel;
use pipeline::ir::KeyMatch;
use pipeline::switch::{InFrame, Switch, SwitchConfig};
use pipeline::tm::mirror::MirrorDest;

use common::{frame, mini_program};

fn switch() -> Switch {
    Switch::new(mini_program(), SwitchConfig::default()).unwrap()
}

const FILE: &str = r#"
tables:
  - table: SwitchIngress.fwd
    default: { action: flood, params: { mgid: 1 } }
    entries:
      - { key: { hdr.ethernet.dst_addr: "00:00:00:00:00:02" }, action: set_port, params: { port: 2 } }
      - { key: { dst_addr: 0x000000000003 }, action: SwitchIngress.set_port, params: { port: 3 } }
  - table: acl
    entries:
      - key: { hdr.ethernet.ether_type: "0x0806 &&& 0xffff" }
        priority: 1
        action: acl_deny
      - key: { hdr.ethernet.src_addr: "00:00:00:00:00:10", hdr.ethernet.ether_type: "0x0800" }
        priority: 2
        action: acl_redirect
        params: { port: 7 }
registers:
  - { register: scratch, index: 1, value: 0xdead }
  - { register: SwitchIngress.pairs, index: 0, lo: 1, hi: 2 }
mirror:
  - { session: 5, direction: ingress, port: 4, max_len: 64 }
  - { session: 6, mgid: 1 }
multicast:
  nodes:
    - { id: 10, rid: 0, ports: [1, 2, 3] }
  groups:
    - { mgid: 1, nodes: [10] }
  prune:
    - { xid: 1, ports: [1] }
    - { xid: 2, ports: [2] }
  lags:
    - { id: 3, ports: [8, 9] }
ports:
  - { port: 2, rate_bps: 10000000000, queue_bytes: 200000, ecn_kmin_bytes: 1000, ecn_kmax_bytes: 9000 }
"#;

fn outputs(sw: &mut Switch, port: u16, bytes: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    sw.process(InFrame { port, bytes, ts: 0 }, &mut |o| out.push(o.port));
    out.sort_unstable();
    out
}

#[test]
fn every_section_lands() {
    let mut sw = switch();
    let f = tables_file::from_yaml(FILE).unwrap();
    let sum = tables_file::apply(&mut sw, &f).unwrap();
    assert_eq!(sum.entries, 4);
    assert_eq!(sum.defaults, 1);
    assert_eq!((sum.registers, sum.mirror_sessions), (2, 2));
    assert_eq!(
        (sum.mc_nodes, sum.mc_groups, sum.prunes, sum.lags),
        (1, 1, 2, 1)
    );
    assert_eq!(sum.ports, 1);

    let fwd = sw.table_entries(PipeSel::All, "SwitchIngress.fwd").unwrap();
    assert_eq!(fwd.len(), 2);
    assert_eq!(fwd[0].keys[0].1, KeyMatch::Exact(2));
    assert_eq!(fwd[1].params, vec![("port".to_string(), 3)]);
    let (def, params) = sw.table_get_default(PipeSel::All, "fwd").unwrap();
    assert_eq!((def.as_str(), params[0].1), ("SwitchIngress.flood", 1));
    let acl = sw.table_entries(PipeSel::All, "acl").unwrap();
    assert_eq!(acl[0].priority, Some(1));
    // The omitted ternary key matches anything.
    assert_eq!(acl[0].keys[1].1, KeyMatch::Ternary { value: 0, mask: 0 });

    assert_eq!(
        sw.register_read(PipeSel::All, "scratch", 1).unwrap()[0].lo,
        0xdead
    );
    let pair = sw.register_read(PipeSel::All, "pairs", 0).unwrap()[0];
    assert_eq!((pair.lo, pair.hi), (1, 2));
    let m = sw.mirror_sessions().get(5).unwrap();
    assert_eq!((m.dest, m.max_len), (MirrorDest::Port(4), Some(64)));
    assert!(matches!(
        sw.mirror_sessions().get(6).unwrap().dest,
        MirrorDest::Multicast {
            mcast_grp_a: Some(1),
            ..
        }
    ));

    // The programmed switch forwards, floods with pruning, and applies the ACL.
    assert_eq!(outputs(&mut sw, 1, &frame(2, 0x20, 0x0800, 10)), vec![2]);
    assert_eq!(
        outputs(&mut sw, 1, &frame(0x55, 0x20, 0x0800, 10)),
        vec![2, 3]
    );
    assert_eq!(
        outputs(&mut sw, 2, &frame(0x55, 0x20, 0x0800, 10)),
        vec![1, 3]
    );
    assert_eq!(
        outputs(&mut sw, 1, &frame(2, 0x20, 0x0806, 10)),
        Vec::<u16>::new()
    );
    assert_eq!(outputs(&mut sw, 1, &frame(2, 0x10, 0x0800, 10)), vec![7]);
}

#[test]
fn the_bundled_l2l3_file_reads() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/l2l3.tables.yaml");
    let f = tables_file::load(&path).unwrap();
    assert_eq!(f.tables.len(), 6);
    assert!(tables_file::load(std::path::Path::new("/nonexistent/x.yaml")).is_err());
}

fn apply_err(yaml: &str) -> TablesFileError {
    let mut sw = switch();
    let f = tables_file::from_yaml(yaml).unwrap();
    tables_file::apply(&mut sw, &f).unwrap_err()
}

fn item(e: &TablesFileError) -> (u64, &str, &ApplyError) {
    match e {
        TablesFileError::Item {
            line,
            context,
            error,
            ..
        } => (*line, context.as_str(), error),
        other => panic!("not an item error: {other}"),
    }
}

#[test]
fn unknown_table_names_line_and_table() {
    let e = apply_err("tables:\n  - table: fwd\n    entries: []\n  - table: nope\n    entries:\n      - { key: {}, action: a }\n");
    let (line, ctx, src) = item(&e);
    assert_eq!(line, 4);
    assert_eq!(ctx, "tables[1] `nope`");
    assert!(matches!(src, ApplyError::Resolve(_)));
    assert!(
        e.to_string()
            .starts_with("line 4, column 12: tables[1] `nope`: "),
        "{e}"
    );
    assert!(e.to_string().contains("no table named `nope`"), "{e}");
}

/// A megabyte table name is not echoed whole (twice) in the error (issue 13).
#[test]
fn a_huge_table_name_is_bounded_in_the_error() {
    let name = "x".repeat(1 << 20);
    let e = apply_err(&format!(
        "tables:\n  - table: {name}\n    entries:\n      - {{ key: {{}}, action: a }}\n"
    ));
    let m = e.to_string();
    assert!(
        m.starts_with("line 2, column 12: tables[0] `xxx"),
        "{}",
        &m[..200]
    );
    assert!(m.contains("characters ...]"), "{}", &m[..200]);
    assert!(
        m.len() < 2 * p4::diag::MAX_MESSAGE_SHOWN + 200,
        "{} bytes",
        m.len()
    );
}

#[test]
fn an_empty_section_still_names_a_real_table() {
    let e = apply_err("tables:\n  - table: fwd\n  - table: fwdd\n");
    let (line, ctx, _) = item(&e);
    assert_eq!((line, ctx), (3, "tables[1] `fwdd`"));
}

#[test]
fn lpm_text_on_an_exact_key_is_refused() {
    let e = apply_err(
        "tables:\n  - table: fwd\n    entries:\n      - { key: { hdr.ethernet.dst_addr: \"10.0.1.0/24\" }, action: drop }\n",
    );
    let msg = e.to_string();
    assert!(msg.contains("line 4"), "{msg}");
    assert!(
        msg.contains("key `hdr.ethernet.dst_addr` (exact key, 48 bits)"),
        "{msg}"
    );
    assert!(
        msg.contains("is an lpm (`v/len`) match but the key is exact"),
        "{msg}"
    );
}

#[test]
fn missing_priority_and_missing_params() {
    let e =
        apply_err("tables:\n  - table: acl\n    entries:\n      - { key: {}, action: acl_deny }\n");
    assert!(e.to_string().contains("needs a priority"), "{e}");
    let e = apply_err("tables:\n  - table: fwd\n    entries:\n      - { key: { dst_addr: 1 }, action: set_port }\n");
    assert!(e.to_string().contains("needs parameter `port`"), "{e}");
}

#[test]
fn api_refusals_carry_the_api_error() {
    let e = apply_err(
        "tables:\n  - table: fwd\n    entries:\n      - { key: { dst_addr: 1 }, action: drop }\n      - { key: { dst_addr: 1 }, action: drop }\n",
    );
    let (line, ctx, src) = item(&e);
    assert_eq!(line, 5);
    assert!(ctx.ends_with("entry 1"), "{ctx}");
    assert!(matches!(src, ApplyError::Api(_)), "{e}");
    let e = apply_err("multicast:\n  groups:\n    - { mgid: 1, nodes: [99] }\n");
    assert!(matches!(item(&e).2, ApplyError::Api(_)), "{e}");
    let e = apply_err("mirror:\n  - { session: 3 }\n");
    assert!(
        e.to_string().contains("exactly one of `port` and `mgid`"),
        "{e}"
    );
    let e = apply_err("registers:\n  - { register: scratch, index: 100, value: 1 }\n");
    assert!(matches!(item(&e).2, ApplyError::Api(_)), "{e}");
    let e = apply_err("registers:\n  - { register: scratch, index: 1, value: 0x1_0000_0000 }\n");
    assert!(e.to_string().contains("32 bits"), "{e}");
    let e = apply_err("ports:\n  - { port: 1, ecn_kmin_bytes: 5 }\n");
    assert!(
        e.to_string().contains("Kmax") || e.to_string().contains("kmax"),
        "{e}"
    );
}

#[test]
fn port_queue_maps_apply_and_bad_ones_are_refused() {
    let mut sw = switch();
    let f =
        tables_file::from_yaml("ports:\n  - { port: 1, queues: 4, queue_map: [3, 2] }\n").unwrap();
    tables_file::apply(&mut sw, &f).unwrap();
    let pq = sw.port_queue_map(1).unwrap();
    assert_eq!(pq.count(), 4);
    assert_eq!(
        (pq.queue(0), pq.queue(1), pq.queue(2), pq.queue(7)),
        (3, 2, 2, 3)
    );
    let e = apply_err("ports:\n  - { port: 1, queue_map: [1] }\n");
    assert!(e.to_string().contains("needs its `queues`"), "{e}");
    let e = apply_err("ports:\n  - { port: 1, queues: 4, queue_map: [4] }\n");
    assert!(matches!(item(&e).2, ApplyError::Api(_)), "{e}");
    assert!(e.to_string().contains("names queue 4"), "{e}");
    let e = apply_err("ports:\n  - { port: 1, queues: 0 }\n");
    assert!(e.to_string().contains("outside 1..=32"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Table files with arbitrary numbers and value texts apply or fail with a positioned
    /// error, never a panic.
    #[test]
    fn random_files_never_panic(
        key in "[0-9a-fx:./&* ]{0,20}",
        port in 0u32..600,
        prio in proptest::option::of(0u32..10),
        node_port in 0u32..140,
        mgid in 0u32..66_000,
        session in 0u32..1100,
        reg_index in 0u32..20,
        reg_value in "[0-9a-fx]{1,12}",
        rate in 0u64..10_000,
        kmin in 0u64..10,
        kmax in 0u64..10,
    ) {
        let yaml = format!(
            "tables:\n  - table: fwd\n    entries:\n      - {{ key: {{ dst_addr: \"{key}\" }}, action: set_port, params: {{ port: {port} }} }}\n\
             \x20 - table: acl\n    entries:\n      - {{ key: {{ ether_type: \"{key}\" }}, {}action: acl_deny }}\n\
             registers:\n  - {{ register: pairs, index: {reg_index}, lo: \"{reg_value}\", hi: 1 }}\n\
             mirror:\n  - {{ session: {session}, port: {port} }}\n\
             multicast:\n  nodes: [ {{ id: 1, rid: 0, ports: [{node_port}] }} ]\n  groups: [ {{ mgid: {mgid}, nodes: [1] }} ]\n\
             ports:\n  - {{ port: {node_port}, rate_bps: {rate}, ecn_kmin_bytes: {kmin}, ecn_kmax_bytes: {kmax} }}\n",
            prio.map(|p| format!("priority: {p}, ")).unwrap_or_default(),
        );
        match tables_file::from_yaml(&yaml) {
            Err(e) => { let _ = e.to_string(); }
            Ok(f) => {
                let mut sw = switch();
                if let Err(e) = tables_file::apply(&mut sw, &f) {
                    let _ = e.to_string();
                }
            }
        }
    }
}

#[test]
fn an_item_error_says_its_reason_once_in_a_printed_chain() {
    let e = apply_err(
        "multicast:\n  nodes:\n    - { id: 1, rid: 1, ports: [1] }\n    - { id: 1, rid: 2, ports: [2] }\n",
    );
    // What anyhow's `{:#}` prints: the message, then each source's.
    let mut chain = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        chain.push_str(&format!(": {s}"));
        src = s.source();
    }
    assert_eq!(chain.matches("already exists").count(), 1, "{chain}");
    assert!(chain.contains("L1 node 1 already exists"), "{chain}");
}

/// The action selector program of `p4/tests/lang/`, compiled.
fn selector_switch() -> Switch {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4/tests/lang/action_selector.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Switch::new(std::sync::Arc::new(c.program), SwitchConfig::default()).unwrap()
}

const PROFILE_FILE: &str = r#"
action_profiles:
  - profile: Ing.ap
    members:
      - { id: 1, action: set_b, params: { v: 1 } }
      - { id: 2, action: set_b, params: { v: 2 } }
    groups:
      - { id: 10, members: [1, 2] }
tables:
  - table: t
    entries:
      - { key: { hdr.h.a: 1 }, group: 10 }
      - { key: { hdr.h.a: 2 }, member: 2 }
"#;

/// Members and groups land, read back, and are protected while something uses them; a table
/// with a profile takes no direct action, and an entry names one target.
#[test]
fn action_profiles_members_groups_and_their_guards() {
    let mut sw = selector_switch();
    let file = tables_file::from_yaml(PROFILE_FILE).unwrap();
    let sum = tables_file::apply(&mut sw, &file).unwrap();
    assert_eq!((sum.members, sum.groups, sum.entries), (2, 1, 2));
    let view = sw.profile_read(PipeSel::All, "sel").unwrap();
    assert_eq!(view.groups, vec![(10, vec![1, 2])]);
    assert_eq!(view.members[1].1, "Ing.set_b");
    let listed = sw.table_entries(PipeSel::All, "t").unwrap();
    assert!(listed.iter().any(|e| e.action == "$group"), "{listed:?}");
    // In use: by an entry (member 2), by a group (member 1), by an entry (group 10).
    let e = sw.profile_member_delete(PipeSel::All, "ap", 2).unwrap_err();
    assert!(e.to_string().contains("used by a table entry"), "{e}");
    let e = sw.profile_member_delete(PipeSel::All, "ap", 1).unwrap_err();
    assert!(e.to_string().contains("is in group 10"), "{e}");
    let e = sw.profile_group_delete(PipeSel::All, "ap", 10).unwrap_err();
    assert!(e.to_string().contains("used by a table entry"), "{e}");
    // The selector's limits: at most 4 members a group.
    for m in 3..=5 {
        sw.profile_member_set(PipeSel::All, "ap", m, "set_b", &[("v", 9)])
            .unwrap();
    }
    let e = sw
        .profile_group_set(PipeSel::All, "ap", 11, &[1, 2, 3, 4, 5])
        .unwrap_err();
    assert!(e.to_string().contains("at most 4 members"), "{e}");
    // A direct action in a profile table is refused.
    let e = sw
        .table_add(
            PipeSel::All,
            "t",
            &[("hdr.h.a", KeyMatch::Exact(3))],
            None,
            "set_b",
            &[("v", 1)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("has an action profile"), "{e}");
    // An entry naming two targets is refused with its line.
    let bad = "tables:\n  - table: t\n    entries:\n      - { key: { hdr.h.a: 4 }, member: 1, group: 10 }\n";
    let e = tables_file::apply(&mut sw, &tables_file::from_yaml(bad).unwrap()).unwrap_err();
    let (line, _, err) = item(&e);
    assert_eq!(line, 4);
    assert!(err.to_string().contains("exactly one of"), "{err}");
}

fn lang_switch(name: &str) -> Switch {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4/tests/lang")
        .join(name);
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Switch::new(std::sync::Arc::new(c.program), SwitchConfig::default()).unwrap()
}

/// Parser value sets: entries land from a file (one text, or a text per field), change what
/// the parser selects at once, read back, and are refused when duplicate, too wide, of the
/// wrong shape or beyond the set's size; a file names the line of a bad entry.
#[test]
fn value_sets_fill_from_files_and_the_api_guards_them() {
    let mut sw = lang_switch("value_set.p4");
    let mut pkt = vec![0x77, 0x05, 0xaa];
    pkt.resize(64, 0xaa);
    let third = |sw: &mut Switch, p: &[u8]| {
        let mut out = Vec::new();
        sw.process(
            InFrame {
                port: 0,
                bytes: p,
                ts: 0,
            },
            &mut |o| out.push(o.bytes.to_vec()),
        );
        out[0][2]
    };
    assert_eq!(third(&mut sw, &pkt), 0xaa, "empty sets match nothing");
    let file = tables_file::from_yaml(
        "value_sets:\n  - value_set: lows\n    entries: [5]\n  - value_set: pairs\n    entries:\n      - { a: 1, b: \"0x02 &&& 0x0f\" }\n",
    )
    .unwrap();
    let sum = tables_file::apply(&mut sw, &file).unwrap();
    assert_eq!(sum.value_set_entries, 2);
    assert_eq!(third(&mut sw, &pkt), 0x33, "lows now matches b == 5");
    pkt[..2].copy_from_slice(&[0x01, 0x42]);
    assert_eq!(
        third(&mut sw, &pkt),
        0x22,
        "pairs: a == 1, b's low nibble 2"
    );
    let listed = sw.value_set_entries(PipeSel::All, "pairs").unwrap();
    assert_eq!(
        listed.len(),
        usize::from(sw.num_pipes()),
        "one entry on each pipe: {listed:?}"
    );
    assert_eq!(listed[0].fields, vec![(1, 0xff), (2, 0x0f)]);

    let e = sw
        .value_set_add(PipeSel::All, "lows", &[(5, 0xff)])
        .unwrap_err();
    assert!(e.to_string().contains("already in the set"), "{e}");
    sw.value_set_add(PipeSel::All, "lows", &[(6, 0xff)])
        .unwrap();
    let e = sw
        .value_set_add(PipeSel::All, "lows", &[(7, 0xff)])
        .unwrap_err();
    assert!(e.to_string().contains("is full (2 entries"), "{e}");
    let e = sw
        .value_set_add(PipeSel::All, "tags", &[(0x100, 0xff)])
        .unwrap_err();
    assert!(e.to_string().contains("does not fit in 8 bits"), "{e}");
    let e = sw
        .value_set_add(PipeSel::All, "pairs", &[(1, 0xff)])
        .unwrap_err();
    assert!(
        e.to_string().contains("has 2 field(s), the request gave 1"),
        "{e}"
    );
    sw.value_set_delete(PipeSel::All, "lows", &[(5, 0xff)])
        .unwrap();
    pkt[..2].copy_from_slice(&[0x77, 0x05]);
    assert_eq!(
        third(&mut sw, &pkt),
        0xaa,
        "deleted: b == 5 no longer matches"
    );
    let e = sw
        .value_set_delete(PipeSel::All, "lows", &[(5, 0xff)])
        .unwrap_err();
    assert!(e.to_string().contains("no such entry"), "{e}");

    let bad = tables_file::from_yaml(
        "value_sets:\n  - value_set: pairs\n    entries:\n      - { a: 1, c: 2 }\n",
    )
    .unwrap();
    let e = tables_file::apply(&mut sw, &bad).unwrap_err();
    let (line, ctx, err) = item(&e);
    assert_eq!(line, 4, "{e}");
    assert!(ctx.contains("value_sets `pairs` entry 0"), "{ctx}");
    assert!(err.to_string().contains("no key `c`"), "{err}");
}

/// `ttl_ms` (BfRt's `$ENTRY_TTL`): an entry of a table with idle timeouts ages from its
/// insertion and a hit restarts it; a table without idle timeouts refuses a TTL, at its line.
#[test]
fn entry_ttls_land_in_tables_with_idle_timeouts_only() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/direct_resources.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let mut sw = Switch::new(std::sync::Arc::new(c.program), SwitchConfig::default()).unwrap();
    let good = r#"
tables:
  - table: fwd
    entries:
      - { key: { hdr.ethernet.dst_addr: "02:00:00:00:00:09" }, action: send, params: { port: 2 }, ttl_ms: 100 }
      - { key: { hdr.ethernet.dst_addr: "02:00:00:00:00:0a" }, action: send, params: { port: 3 } }
"#;
    tables_file::apply(&mut sw, &tables_file::from_yaml(good).unwrap()).unwrap();
    let key = |last: u128| {
        [(
            "hdr.ethernet.dst_addr",
            KeyMatch::Exact(0x0200_0000_0000 | last),
        )]
    };
    assert_eq!(
        sw.table_entry_idle(PipeSel::All, "fwd", &key(9), None)
            .unwrap(),
        (100_000_000, 0)
    );
    assert_eq!(
        sw.table_entry_idle(PipeSel::All, "fwd", &key(10), None)
            .unwrap()
            .0,
        0
    );
    let aging = sw.table_idle(PipeSel::All, "fwd").unwrap();
    assert_eq!(aging.len(), 1, "only the entry with a TTL ages");
    // A hit at 5 ms is the entry's last hit.
    let mut f = frame(0x0200_0000_0009, 0x0200_0000_0001, 0x0800, 46);
    f.truncate(60);
    sw.process(
        InFrame {
            port: 0,
            bytes: &f,
            ts: 5_000_000,
        },
        &mut |_| {},
    );
    assert_eq!(
        sw.table_entry_idle(PipeSel::All, "fwd", &key(9), None)
            .unwrap()
            .1,
        5_000_000
    );
    let mut plain = switch();
    let bad = r#"
tables:
  - table: SwitchIngress.fwd
    entries:
      - { key: { hdr.ethernet.dst_addr: "00:00:00:00:00:02" }, action: set_port, params: { port: 2 }, ttl_ms: 5 }
"#;
    let e = tables_file::apply(&mut plain, &tables_file::from_yaml(bad).unwrap()).unwrap_err();
    let (line, _, err) = item(&e);
    assert_eq!(line, 5);
    assert!(err.to_string().contains("idle timeout"), "{err}");
}

/// One `meters:` item applied to a fresh switch: refused at its line, saying `why`.
fn refused_meter_item(program: &std::sync::Arc<pipeline::ir::Program>, bad: &str, why: &str) {
    let mut sw = Switch::new(program.clone(), SwitchConfig::default()).unwrap();
    let yaml = format!("meters:\n  - {bad}\n");
    let e = tables_file::apply(&mut sw, &tables_file::from_yaml(&yaml).unwrap()).unwrap_err();
    let (line, _, err) = item(&e);
    assert_eq!(line, 2, "{bad}");
    assert!(
        e.to_string().contains(why) || err.to_string().contains(why),
        "{bad}: {e}"
    );
}

/// `meters:` sets a byte meter's count adjustment, by meter name or by a direct meter's table,
/// on every pipe or one; an adjustment outside the 14-bit signed field, an item naming both
/// or neither, or an unknown name is refused with its line.
#[test]
fn meters_set_their_byte_count_adjustment() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4/tests/fidelity/meter_byte_adjust.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let program = std::sync::Arc::new(c.program);
    let mut sw = Switch::new(program.clone(), SwitchConfig::default()).unwrap();
    let yaml = "meters:\n  - { meter: Ingress.by_index, byte_count_adjust: -12 }\n  \
                - { table: Ingress.classify, byte_count_adjust: 20, pipe: 0 }\n";
    let s = tables_file::apply(&mut sw, &tables_file::from_yaml(yaml).unwrap()).unwrap();
    assert_eq!(s.meters, 2);
    let read = |sw: &Switch, name: &str| sw.meter_byte_adjust(PipeSel::All, name).unwrap();
    assert_eq!(read(&sw, "Ingress.by_index"), [(0, -12)]);
    assert_eq!(read(&sw, "Ingress.by_entry"), [(0, 20)]);
    for (bad, why) in [
        (
            "{ meter: Ingress.by_index, byte_count_adjust: 8192 }",
            "-8192..=8191",
        ),
        (
            "{ meter: Ingress.by_index, table: Ingress.classify, byte_count_adjust: 1 }",
            "one of them",
        ),
        ("{ byte_count_adjust: 1 }", "one of them"),
        (
            "{ meter: Ingress.nothing, byte_count_adjust: 1 }",
            "nothing",
        ),
    ] {
        refused_meter_item(&program, bad, why);
    }
}

/// `meters:` sets a cell's rates: an indexed meter's cell by `index`, a direct meter's by its
/// table's `key`; they read back through the API and colour a frame. One 64-byte frame on a
/// committed burst of 60 bytes is yellow (1) on both meters, green (0) on unconfigured ones.
/// Partial rates, a cell without rates, and an `index` on a direct meter are refused.
#[test]
fn meters_set_cell_rates() {
    use pipeline::api::cells::Cell;
    use pipeline::externs::meter::MeterConfig;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4/tests/fidelity/meter_byte_adjust.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let program = std::sync::Arc::new(c.program);
    let colours = |sw: &mut Switch| {
        let mut f = frame(1, 2, 0x88b5, 50);
        assert_eq!(f.len(), 64);
        f[14] = 0xff;
        f[15] = 0xff;
        let mut out = Vec::new();
        sw.process(
            InFrame {
                port: 1,
                bytes: &f,
                ts: 0,
            },
            &mut |o| out.push((o.bytes[14], o.bytes[15])),
        );
        out
    };
    let mut plain = Switch::new(program.clone(), SwitchConfig::default()).unwrap();
    assert_eq!(colours(&mut plain), [(0, 0)]);
    let yaml = r#"
meters:
  - { meter: by_index, index: 3, cir: 1, pir: 1, cbs: 60, pbs: 1000 }
  - { table: Ingress.classify, key: { hdr.ethernet.src_addr: 2 }, cir: 1, pir: 1, cbs: 60, pbs: 1000, byte_count_adjust: 0 }
"#;
    let mut sw = Switch::new(program.clone(), SwitchConfig::default()).unwrap();
    let s = tables_file::apply(&mut sw, &tables_file::from_yaml(yaml).unwrap()).unwrap();
    assert_eq!(s.meters, 2);
    let want = MeterConfig {
        cir: 1,
        pir: 1,
        cbs: 60,
        pbs: 1000,
    };
    let cell = Cell::Index {
        name: "Ingress.by_index",
        index: 3,
    };
    assert_eq!(
        sw.meter_config(PipeSel::All, cell).unwrap(),
        [(0, Some(want))]
    );
    // The first frame reads the stored GREEN (Tofino's meter colours by the previous update);
    // its 68 bytes (FCS included) overdraw the 60-byte committed bucket: the next is YELLOW.
    assert_eq!(colours(&mut sw), [(0, 0)]);
    assert_eq!(colours(&mut sw), [(1, 1)]);
    for (bad, why) in [
        ("{ meter: by_index, index: 1, cir: 1, pir: 1 }", "all four"),
        ("{ meter: by_index, index: 1 }", "give the rates too"),
        (
            "{ table: Ingress.classify, index: 1, cir: 1, pir: 1, cbs: 1, pbs: 1 }",
            "not an `index`",
        ),
        (
            "{ meter: by_index, index: 16, cir: 1, pir: 1, cbs: 1, pbs: 1 }",
            "16",
        ),
        (
            "{ meter: by_index, cir: 2, pir: 1, cbs: 1, pbs: 1 }",
            "below the committed rate",
        ),
    ] {
        refused_meter_item(&program, bad, why);
    }
}

/// The driver refuses a match entry on an empty selector group, and emptying or deleting a group
/// entries point at (open-p4studio `tna_action_selector` test, `ActionProfileSelectorTestMany`);
/// the table file, the runtime API and P4Runtime (FAILED_PRECONDITION) all refuse, with reasons.
#[test]
fn empty_selector_groups_are_not_referenced() {
    let mut sw = selector_switch();
    let empty = r#"
action_profiles:
  - profile: Ing.ap
    members: [ { id: 1, action: set_b, params: { v: 1 } } ]
    groups:  [ { id: 10, members: [] } ]
tables:
  - table: t
    entries: [ { key: { hdr.h.a: 1 }, group: 10 } ]
"#;
    let e = tables_file::apply(&mut sw, &tables_file::from_yaml(empty).unwrap()).unwrap_err();
    let (line, _, err) = item(&e);
    assert_eq!(line, 8);
    assert!(err.to_string().contains("group 10 has no members"), "{err}");
    assert!(sw.table_entries(PipeSel::All, "t").unwrap().is_empty());
    // Give the group a member: the entry lands; emptying or deleting the group is refused.
    sw.profile_group_set(PipeSel::All, "ap", 10, &[1]).unwrap();
    let ent = [("hdr.h.a", KeyMatch::Exact(1))];
    let g = pipeline::table::profile::EntryRef::Group(10);
    sw.table_add_ref(PipeSel::All, "t", &ent, None, g).unwrap();
    let e = sw
        .profile_group_set(PipeSel::All, "ap", 10, &[])
        .unwrap_err();
    assert!(e.to_string().contains("cannot be emptied"), "{e}");
    let p4 = control::p4runtime::codec::P4Error::from(e);
    assert_eq!(p4.code, tonic::Code::FailedPrecondition);
    let e = sw.profile_group_delete(PipeSel::All, "ap", 10).unwrap_err();
    assert!(e.to_string().contains("used by a table entry"), "{e}");
    assert_eq!(
        sw.profile_read(PipeSel::All, "ap").unwrap().groups,
        vec![(10, vec![1])]
    );
    // Another empty group cannot take an entry through the API either.
    sw.profile_group_set(PipeSel::All, "ap", 11, &[]).unwrap();
    let ent = [("hdr.h.a", KeyMatch::Exact(2))];
    let g = pipeline::table::profile::EntryRef::Group(11);
    let e = sw
        .table_add_ref(PipeSel::All, "t", &ent, None, g)
        .unwrap_err();
    assert!(e.to_string().contains("group 11 has no members"), "{e}");
    let p4 = control::p4runtime::codec::P4Error::from(e);
    assert_eq!(p4.code, tonic::Code::FailedPrecondition);
}

/// `port_metadata` is the chip's phase-0 word (bf-p4c `PardeSpec::bytePhase0Size()`): on
/// Tofino 1 it holds 64 bits, so a 65-bit value is refused with the reason, and a 64-bit one
/// is taken. (Tofino 2's 128-bit word: `p4/tests/conformance/tf2_port_metadata_128`.)
#[test]
fn port_metadata_wider_than_the_phase0_word_is_refused() {
    let mut sw = selector_switch();
    let ok = "ports:\n  - { port: 1, port_metadata: 0xffffffffffffffff }\n";
    tables_file::apply(&mut sw, &tables_file::from_yaml(ok).unwrap()).unwrap();
    let wide = "ports:\n  - { port: 1, port_metadata: 0x10000000000000000 }\n";
    let e = tables_file::apply(&mut sw, &tables_file::from_yaml(wide).unwrap()).unwrap_err();
    let chain = format!("{e} {:?}", e);
    assert!(
        chain.contains("wider than the chip's 64-bit phase-0 word"),
        "{chain}"
    );
}

/// A JSON table file (YAML reads JSON) with integers past 64 bits: the key `2^64 + 1` and a
/// 129-bit key reach the 48-bit key as written, not rounded to a float that might fit, and are
/// refused with their line; `2^48 - 1` written the same way lands exactly.
#[test]
fn json_integers_past_64_bits_are_exact_and_refused_when_too_wide() {
    for big in [
        "18446744073709551617",
        "680564733841876926926749214863536422913",
    ] {
        let json = format!(
            "{{\"tables\": [{{\"table\": \"fwd\",\n \"entries\": [{{\"key\": {{\"dst_addr\": {big}}}, \
             \"action\": \"set_port\", \"params\": {{\"port\": 2}}}}]}}]}}"
        );
        let e = apply_err(&json);
        let (line, _, _) = item(&e);
        assert_eq!(line, 2, "{e}");
        assert!(e.to_string().contains("48 bits"), "{e}");
    }
    let mut sw = switch();
    let json = "{\"tables\": [{\"table\": \"fwd\", \"entries\": [{\"key\": {\"dst_addr\": \
                281474976710655}, \"action\": \"set_port\", \"params\": {\"port\": 2}}]}]}";
    tables_file::apply(&mut sw, &tables_file::from_yaml(json).unwrap()).unwrap();
    let got = sw.table_entries(PipeSel::All, "fwd").unwrap();
    assert_eq!(got[0].keys[0].1, KeyMatch::Exact((1 << 48) - 1));
}
