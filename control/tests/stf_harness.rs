//! The Tofino model's STF harness dialect (the interpreter bf-p4c's STF tests for TNA run on),
//! on a small program: its `add` forms (omitted keys and parameters, wide parameters, named
//! and hex priorities, `ACT P:V` without parentheses, a priority as the TCAM address that a
//! later entry replaces, action-profile members), `check_counter` / `check_register` forms
//! (pipe prefix, `=`, slices, masks, no comparison = print), `expect PORT` without data, `;`,
//! quoted names, `sleep`, validity-key spellings and lossy reading of non-UTF-8 bytes;
//! `$NAME` expansion and `setenv`, ternary literals zero-extended, octal and negative numbers
//! of SRAM fields, short IPv4 forms, counters read in the first pipe, selector groups, and
//! the notes on lpm priorities and `0xHEX/len`.

use std::sync::Arc;

use control::stf::{self, CheckOutcome, StfOptions, StfReport};

const PROGRAM: &str = r#"
#include <core.p4>
#include <tna.p4>
header data_t { bit<32> f1; bit<32> f2; bit<8> b1; bit<8> b2; }
header opt_t { bit<8> o; }
struct headers { data_t data; opt_t opt; }
struct metadata { }
parser IP(packet_in pkt, out headers hdr, out metadata md,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.data);
        transition select(hdr.data.b1) { 0xee: with_opt; default: accept; }
    }
    state with_opt { pkt.extract(hdr.opt); transition accept; }
}
control I(inout headers hdr, inout metadata md,
          in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS_AND_BYTES) ctr;
    Register<bit<32>, bit<8>>(256) reg;
    RegisterAction<bit<32>, bit<8>, bit<32>>(reg) reg_set = {
        void apply(inout bit<32> v) { v = 0x12345678; }
    };
    action set_port(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action setb2(bit<8> val, PortId_t port) {
        hdr.data.b2 = val;
        ig_tm_md.ucast_egress_port = port;
    }
    action mark(bit<8> idx) { ctr.count(idx); reg_set.execute(idx); }
    action noop() { }
    table ex {
        key = { hdr.data.f1 : exact; hdr.data.b1 : exact; }
        actions = { set_port; setb2; noop; }
        default_action = noop;
    }
    table tern {
        key = { hdr.data.f2 : ternary; }
        actions = { set_port; noop; }
        default_action = noop;
    }
    ActionProfile(16) ap;
    table ap_t {
        key = { hdr.data.b2 : exact; }
        actions = { set_port; noop; }
        implementation = ap;
        size = 16;
    }
    table v {
        key = { hdr.opt.isValid() : exact; hdr.data.b2 : exact; }
        actions = { set_port; noop; }
        default_action = noop;
    }
    table cnt {
        key = { hdr.data.b2 : exact; }
        actions = { mark; noop; }
        default_action = noop;
    }
    table lp {
        key = { hdr.data.f2 : lpm; }
        actions = { set_port; noop; }
        default_action = noop;
    }
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) sel_hash;
    ActionProfile(16) ap2;
    ActionSelector(ap2, sel_hash, SelectorMode_t.FAIR, 4, 8) sel;
    @selector_enable_scramble(0)
    table sel_t {
        key = { hdr.data.b1 : exact; hdr.data.f1 : selector; }
        actions = { set_port; noop; }
        implementation = sel;
        size = 16;
    }
    apply {
        ig_tm_md.ucast_egress_port = 1;
        ex.apply();
        tern.apply();
        ap_t.apply();
        v.apply();
        cnt.apply();
        lp.apply();
        sel_t.apply();
    }
}
control ID(packet_out pkt, inout headers hdr, in metadata md,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out headers hdr, out metadata md,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control E(inout headers hdr, inout metadata md,
          in egress_intrinsic_metadata_t eg_intr_md,
          in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
          inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control ED(packet_out pkt, inout headers hdr, in metadata md,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
"#;

fn program() -> Arc<pipeline::ir::Program> {
    let opts = p4::compile::CompileOptions::default();
    let c = p4::compile::compile_str("harness.p4", PROGRAM, &opts)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Arc::new(c.program)
}

fn run(text: &str) -> StfReport {
    let stmts = stf::parse(text).unwrap_or_else(|e| panic!("{e}"));
    stf::run_stf(program(), &stmts, &StfOptions::default())
}

fn notes(r: &StfReport) -> String {
    r.notes
        .iter()
        .map(|n| format!("{}: {}\n", n.line, n.message))
        .collect()
}

/// f1, f2, b1, b2 as packet hex.
fn pkt(f1: u32, f2: u32, b1: u8, b2: u8) -> String {
    format!("{f1:08x} {f2:08x} {b1:02x} {b2:02x}")
}

/// A counter never hit, checked without a comparison, is printed and passes (the harness
/// prints it; it used to be checked as `packets > 0` and fail).
#[test]
fn check_without_comparison_prints() {
    let r = run(&format!(
        "add cnt b2:5 mark(idx:5)\npacket 0 {}\nexpect 1\nwait\n\
         check_counter ctr(9)\ncheck_counter ctr(5) packets\ncheck_register reg(5)\n",
        pkt(1, 2, 3, 5)
    ));
    assert!(r.all_passed(), "{r}");
    assert!(r.checks.is_empty(), "{r}");
    let n = notes(&r);
    assert!(
        n.contains("5: check_counter ctr(9) packets: 0 (0x0)"),
        "{n}"
    );
    assert!(
        n.contains("6: check_counter ctr(5) packets: 1 (0x1)"),
        "{n}"
    );
    assert!(
        n.contains("7: check_register reg(5): 305419896 (0x12345678)"),
        "{n}"
    );
}

/// `=`, the `N:` pipe prefix, `[hi:lo]`, `& MASK` and `<`/`>=` on registers.
#[test]
fn harness_check_forms() {
    let r = run(&format!(
        "add cnt b2:5 mark(idx:5)\npacket 0 {}\nexpect 1\nwait\n\
         check_counter 0:ctr(5) packets = 1\ncheck_counter 0:ctr(5) bytes > 0\n\
         check_register reg(5) lo[15:0] = 0x5678\ncheck_register reg(5) & 0xff00 = 0x5600\n\
         check_register 0:reg(5) < 0x12345679\ncheck_register reg(5) lo >= 0x12345678\n\
         check_register reg(5) lo[31:16] > 0x1234\n",
        pkt(1, 2, 3, 5)
    ));
    let outcomes: Vec<(usize, &CheckOutcome)> =
        r.checks.iter().map(|c| (c.line, &c.outcome)).collect();
    let passed = |l: usize| {
        outcomes
            .iter()
            .any(|(n, o)| *n == l && **o == CheckOutcome::Passed)
    };
    for l in 5..=10 {
        assert!(passed(l), "line {l}: {r}");
    }
    assert!(
        matches!(
            outcomes.last(),
            Some((11, CheckOutcome::ValueMismatch { got: 0x1234 }))
        ),
        "{r}"
    );
}

/// `expect PORT` without data: any number of packets on the port, zero included, from then
/// on, and it does not take a packet that an `expect` with data is waiting for.
#[test]
fn expect_without_data_lets_packets_through() {
    let p = pkt(1, 2, 3, 4);
    let zero = run("add ex f1:1 b1:3 set_port(port:2)\nexpect 1\nwait\n");
    assert!(zero.all_passed(), "{zero}");
    let many = run(&format!(
        "expect 1\npacket 0 {p}\npacket 0 {p}\nwait\npacket 0 {p}\n"
    ));
    assert!(many.all_passed(), "{many}");
    assert!(
        notes(&many).contains("2 more packets out of port 1"),
        "{many}"
    );
    let then_data = run(&format!("expect 1\nexpect 1 {p}\npacket 0 {p}\n"));
    assert!(
        then_data.all_passed() && then_data.checks.len() == 1,
        "{then_data}"
    );
    // A wrong packet on such a port still fails an `expect` with data.
    let wrong = run(&format!(
        "expect 1\nexpect 1 {}\npacket 0 {p}\n",
        pkt(9, 9, 9, 9)
    ));
    assert!(!wrong.all_passed(), "{wrong}");
}

/// Two entries at one priority of a ternary table: the later replaces the earlier (the
/// harness's priority is the TCAM address).
#[test]
fn same_priority_replaces() {
    let r = run(&format!(
        "add tern 5 f2:2 set_port(port:2)\nadd tern 5 f2:3 set_port(port:3)\n\
         packet 0 {}\nexpect 1\npacket 0 {}\nexpect 3 {}\n",
        pkt(1, 2, 0, 0),
        pkt(1, 3, 0, 0),
        pkt(1, 3, 0, 0)
    ));
    assert!(r.all_passed() && r.checks.len() == 1, "{r}");
    assert!(
        notes(&r).contains("2: add I.tern: replaces the entry at priority 5"),
        "{r}"
    );
}

/// Omitted exact keys match 0, omitted parameters are 0, wide parameters are cut (warned).
#[test]
fn omitted_keys_and_parameters_and_wide_parameters() {
    let r = run(&format!(
        "add ex b1:3 set_port(port:0x202)\nadd ex f1:7 setb2(port:4)\n\
         packet 0 {}\nexpect 2 {}\npacket 0 {}\nexpect 4 {}\n",
        pkt(0, 0, 3, 9),
        pkt(0, 0, 3, 9),
        pkt(7, 0, 0, 9),
        pkt(7, 0, 0, 0)
    ));
    assert!(r.all_passed(), "{r}");
    let n = notes(&r);
    assert!(
        n.contains("1: add ex: no value for exact key `hdr.data.f1`: it matches 0"),
        "{n}"
    );
    assert!(
        n.contains("1: add ex: argument `port:0x202` does not fit in 9 bits: cut to 0x2"),
        "{n}"
    );
    assert!(
        n.contains("2: add ex: no value for exact key `hdr.data.b1`"),
        "{n}"
    );
    assert!(
        n.contains("2: add ex: no value for parameter `val`: it is 0"),
        "{n}"
    );
}

/// `priority:N`, hex priorities, `ACT P:V` without parentheses, commas, `;` between
/// statements, quoted names, `setdefault T ACT P:V`, `sleep`.
#[test]
fn harness_add_forms_and_script_syntax() {
    let r = run(&format!(
        "add tern priority:1 f2:2 set_port port:2\nadd \"I.tern\" 0x10 f2:0x0000000* \"set_port\"(port:3)\n\
         add ex f1:1, b1:1, set_port(port:5); setdefault ex set_port port:6\n\
         packet 0 {}; expect 3 {}\nsleep 1\npacket 0 {}\nexpect 5 {}\npacket 0 {}\nexpect 6 {}\n",
        pkt(1, 2, 0, 0),
        pkt(1, 2, 0, 0),
        pkt(1, 0x100, 1, 0),
        pkt(1, 0x100, 1, 0),
        pkt(2, 0x20, 0, 0),
        pkt(2, 0x20, 0, 0),
    ));
    assert!(r.all_passed(), "{r}");
    assert_eq!(r.checks.len(), 3, "{r}");
}

/// Validity keys as the runners spell them: `hdr.opt.$valid`, `hdr.opt`, a lone `valid`.
#[test]
fn validity_key_spellings() {
    for spelling in ["hdr.opt.$valid", "hdr.opt", "valid", "opt.$valid$"] {
        let r = run(&format!(
            "add v {spelling}:1 b2:4 set_port(port:7)\npacket 0 {} 55\nexpect 7 {} 55\n\
             packet 0 {}\nexpect 1\n",
            pkt(0, 0, 0xee, 4),
            pkt(0, 0, 0xee, 4),
            pkt(0, 0, 0, 4),
        ));
        assert!(r.all_passed() && r.checks.len() == 1, "{spelling}: {r}");
    }
}

/// `add PROFILE ADDR ACTION(...)` makes a member; `add T KEYS ACTION(ADDR)` points at it.
#[test]
fn action_profile_members() {
    let r = run(&format!(
        "add ap 3 set_port(port:2)\nadd ap 0x4 set_port port:4\nadd ap_t b2:7 set_port(3)\n\
         add ap_t b2:8 noop(4)\npacket 0 {}\nexpect 2 {}\npacket 0 {}\nexpect 4 {}\n\
         remove all\npacket 0 {}\nexpect 1 {}\n",
        pkt(0, 0, 0, 7),
        pkt(0, 0, 0, 7),
        pkt(0, 0, 0, 8),
        pkt(0, 0, 0, 8),
        pkt(0, 0, 0, 7),
        pkt(0, 0, 0, 7),
    ));
    assert!(r.all_passed(), "{r}");
    let e = run("add ap_t b2:7 set_port(9)\n");
    assert!(!e.errors.is_empty(), "{e}");
}

/// A non-UTF-8 byte in a comment does not refuse the file (it was "stream did not contain
/// valid UTF-8", no line).
#[test]
fn non_utf8_comment_is_read() {
    let text = stf::decode(b"# caf\xe9\nwait\n");
    assert_eq!(stf::parse(&text).unwrap().len(), 1);
}

/// `wire P -> Q` loops P's output back in on Q (this program sends everything to port 1
/// again, so the loop is cut, with a note); bmv2's `register_write/reset/read`.
#[test]
fn wire_and_register_commands() {
    let p = pkt(1, 2, 3, 4);
    let r = run(&format!("wire 1 -> 2\nexpect 1 {p}\npacket 0 {p}\n"));
    assert!(r.all_passed() && r.checks.len() == 1, "{r}");
    let n = notes(&r);
    assert!(n.contains("3: wired ports looped 64 times: stopped"), "{n}");
    assert!(n.contains("1: 63 more packets out of port 1"), "{n}");
    let r = run(
        "register_write reg 5 7\ncheck_register reg(5) = 7\nregister_reset reg\n\
         check_register reg(5) = 0\nregister_write reg 6 9\nregister_read reg 6\n",
    );
    assert!(r.all_passed() && r.checks.len() == 2, "{r}");
    assert!(
        notes(&r).contains("6: check_register reg(6): 9 (0x9)"),
        "{r}"
    );
}

/// Packets go in and come out as the script writes them, as the runners put them into the
/// pipeline (no MAC pads a 10-byte packet: its byte count is 10 + the FCS, and an exact
/// expectation of 10 bytes holds); `min_frame: Some(60)` pads as the wire does.
#[test]
fn stf_frames_are_not_padded() {
    let script = format!(
        "add cnt b2:5 mark(idx:5)\npacket 0 {p}\nexpect 1 {p}$\nwait\ncheck_counter ctr(5) bytes == {{}}\n",
        p = pkt(1, 2, 3, 5)
    );
    let r = run(&script.replace("{}", "14"));
    assert!(r.all_passed(), "{r}");
    let stmts = stf::parse(&script.replace("{}", "64")).unwrap();
    let padded = StfOptions {
        min_frame: Some(pipeline::switch::MIN_FRAME),
        ..StfOptions::default()
    };
    let r = stf::run_stf(program(), &stmts, &padded);
    assert!(r.all_passed(), "{r}");
}

/// `$NAME`, `${NAME}`, `${NAME:-w}` from the environment and `setenv`; a name an `add ... =
/// NAME` gave stays `$NAME` (the entry); `$(cmd)` is refused, naming its column.
#[test]
fn variables_expand_and_setenv_sets_them() {
    let vars = [
        ("P".to_string(), "2".to_string()),
        ("A".to_string(), "9".to_string()),
    ];
    let text = format!(
        "setenv B 3\nadd ex f1:1 b1:${{B}} set_port(port:$P)\npacket 0 {p}\nexpect $P {p}\n\
         add ex f1:${{U:-4}} b1:3 set_port(port:6) = A\ncheck_counter ctr($A)\n",
        p = pkt(1, 2, 3, 4)
    );
    let stmts = stf::parse_with_env(&text, vars.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&stmts.last().unwrap().stmt, stf::Stmt::CheckCounter { cell: stf::CellRef::Entry(n), .. } if n == "A"),
        "{stmts:?}"
    );
    let r = stf::run_stf(program(), &stmts[..3], &StfOptions::default());
    assert!(r.all_passed() && r.checks.len() == 1, "{r}");
    let e = stf::parse_with_env("wait\npacket 0 $(cat /etc/passwd)\n", vars).unwrap_err();
    assert_eq!((e.line, e.column), (2, 10));
    assert!(e.message.contains("shell command"), "{e}");
}

/// A ternary literal with `*` narrower than its key: the bits above it must be 0, unless
/// its first digit is `*` (the harness's reading; noted where bmv2's differs).
#[test]
fn short_ternary_literals_extend_as_the_harness() {
    let r = run(&format!(
        "add tern 5 f2:0x0* set_port(port:2)\nadd tern 4 f2:0x*7 set_port(port:3)\n\
         packet 0 {}\nexpect 1\npacket 0 {}\nexpect 2 {}\npacket 0 {}\nexpect 3 {}\n",
        pkt(0, 0x0100_0005, 0, 0),
        pkt(0, 5, 0, 0),
        pkt(0, 5, 0, 0),
        pkt(0, 0x0100_0007, 0, 0),
        pkt(0, 0x0100_0007, 0, 0),
    ));
    assert!(r.all_passed() && r.checks.len() == 2, "{r}");
    assert!(
        notes(&r).contains("1: add tern: key `f2`: `0x0*`: the bits above"),
        "{r}"
    );
}

/// Exact keys of an all-exact table and action parameters read `010` as octal and `-1` as
/// all ones (strtoull); a ternary table's keys stay decimal.
#[test]
fn octal_and_negative_numbers_in_sram_fields() {
    let r = run(&format!(
        "add ex f1:010 b1:0 setb2(val:-1, port:011)\nadd tern 1 f2:010 set_port(port:4)\n\
         packet 0 {}\nexpect 9 {}\npacket 0 {}\nexpect 4 {}\n",
        pkt(8, 0, 0, 0),
        pkt(8, 0, 0, 0xff),
        pkt(0, 10, 0, 0),
        pkt(0, 10, 0, 0),
    ));
    assert!(r.all_passed() && r.checks.len() == 2, "{r}");
    let n = notes(&r);
    assert!(n.contains("`010` read as 0x8 (a leading 0 is octal"), "{n}");
    assert!(
        n.contains("`-1` read as 0xff (a negative value wraps"),
        "{n}"
    );
}

/// `a.b` and `a.b.c` are IPv4 addresses whose last part fills the remaining bytes.
#[test]
fn short_ipv4_forms() {
    let r = run(&format!(
        "add lp f2:10.258 set_port(port:2)\nadd lp f2:11.1.2/24 set_port(port:3)\n\
         packet 0 {}\nexpect 2\npacket 0 {}\nexpect 3\n",
        pkt(0, 0x0a00_0102, 0, 0),
        pkt(0, 0x0b01_0099, 0, 0),
    ));
    assert!(r.all_passed() && r.errors.is_empty(), "{r}");
    assert!(
        r.notes
            .iter()
            .all(|n| !n.message.contains("more packets") || n.message.starts_with("1 more")),
        "{r}"
    );
}

/// Without a pipe prefix a counter is read in the first pipe running it (a packet counted in
/// pipe 1 is not seen there), as the harness does and as `check_register` did already.
#[test]
fn counters_are_read_in_the_first_pipe() {
    let text = format!(
        "add cnt b2:5 mark(idx:5)\npacket 128 {}\nexpect 1\nwait\n\
         check_counter ctr(5) packets == 0\ncheck_counter 1:ctr(5) packets == 1\n",
        pkt(1, 2, 3, 5)
    );
    let mut opts = StfOptions::default();
    opts.config.pipes = 2;
    let r = stf::run_stf(program(), &stf::parse(&text).unwrap(), &opts);
    assert!(r.all_passed() && r.checks.len() == 2, "{r}");
}

/// pisa matches the longest prefix whatever the priorities say, and notes where the
/// harness (priority = TCAM address) would pick the other entry; `0xHEX/len` keeps its
/// prefix, noted (the harness drops it).
#[test]
fn lpm_priorities_and_hex_prefixes_are_noted() {
    let r = run(&format!(
        "add lp 10 f2:10.0.0.0/8 set_port(port:2)\nadd lp 1 f2:10.1.0.0/16 set_port(port:3)\n\
         add lp 20 f2:10.2.0.0/16 set_port(port:4)\nadd lp f2:0x0b000000/8 set_port(port:5)\n\
         packet 0 {}\nexpect 3\npacket 0 {}\nexpect 5\n",
        pkt(0, 0x0a01_0203, 0, 0),
        pkt(0, 0x0b01_0203, 0, 0),
    ));
    assert!(r.all_passed() && r.errors.is_empty(), "{r}");
    let n = notes(&r);
    assert!(
        n.contains("2: add I.lp: priorities order this /16 entry (priority 1) and the /8 entry of line 1 (priority 10)"),
        "{n}"
    );
    assert!(!n.contains("3: add I.lp: priorities"), "{n}");
    assert!(
        n.contains("4: add lp: key `f2`: `0x0b000000/8`: prefix /8 applied"),
        "{n}"
    );
}

/// `selector SEL(G) add|remove MEMBER...` edits group G; `$SELECTOR_GROUP_ID:G` points an
/// entry at it, `$ACTION_MEMBER_ID:M` at a member.
#[test]
fn selector_groups_from_the_script() {
    let p = pkt(1, 0, 9, 0);
    let r = run(&format!(
        "add ap2 2 set_port(port:2)\nadd ap2 3 set_port(port:3)\nselector sel(1) add 2\n\
         add sel_t b1:9 $SELECTOR_GROUP_ID:1\npacket 0 {p}\nexpect 2\nwait\n\
         selector sel(1) add 3; selector sel(1) remove 2\npacket 0 {p}\nexpect 3\nwait\n\
         add sel_t b1:9 $ACTION_MEMBER_ID:2\npacket 0 {p}\nexpect 2\n"
    ));
    assert!(r.all_passed() && r.errors.is_empty(), "{r}");
    let e = run("selector nosuch(1) add 2\n");
    assert!(e.errors[0].message.contains("selector nosuch(1)"), "{e}");
}

/// simple_switch_CLI's `mc_node_create RID PORTS | LAGS`.
#[test]
fn multicast_node_with_lags() {
    let r = run("mc_mgrp_create 1\nmc_node_create 0 2 3 | 1\nmc_node_associate 1 0\n");
    assert!(r.errors.is_empty(), "{r}");
}

/// The harness's last try at a key name: `.` and `$` as `_` (`hdr_data_f1`), noted.
#[test]
fn underscored_key_names() {
    let p = pkt(1, 0, 3, 0);
    let r = run(&format!(
        "add ex hdr_data_f1:1 hdr_data_b1:3 set_port(port:2)\npacket 0 {p}\nexpect 2 {p}\n"
    ));
    assert!(r.all_passed() && r.checks.len() == 1, "{r}");
    assert!(
        notes(&r).contains("key `hdr_data_f1` read as `hdr.data.f1`"),
        "{r}"
    );
}

/// What follows `$` in expected data is not read (the harness's reading).
#[test]
fn data_after_dollar_is_ignored() {
    let p = pkt(1, 2, 3, 4);
    let r = run(&format!("packet 0 {p}\nexpect 1 {p} $ 99\n"));
    assert!(r.all_passed() && r.checks.len() == 1, "{r}");
}
