//! The Tofino model's STF harness dialect (the interpreter bf-p4c's STF tests for TNA run on),
//! on a small program: its `add` forms (omitted keys and parameters, wide parameters, named
//! and hex priorities, `ACT P:V` without parentheses, a priority as the TCAM address that a
//! later entry replaces, action-profile members), `check_counter` / `check_register` forms
//! (pipe prefix, `=`, slices, masks, no comparison = print), `expect PORT` without data, `;`,
//! quoted names, `sleep`, validity-key spellings and lossy reading of non-UTF-8 bytes.

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
    apply {
        ig_tm_md.ucast_egress_port = 1;
        ex.apply();
        tern.apply();
        ap_t.apply();
        v.apply();
        cnt.apply();
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
