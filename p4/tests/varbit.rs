//! The two-argument extract (P4_16 §12.8.2) on `tests/lang/varbit.p4` as Tofino runs what
//! bf-p4c makes of it: a varbit longer than its field ends the parse as `transition reject`
//! (bf-p4c's reject branch for that value of the length's variable: no error, no drop), a
//! packet shorter than the length says is `PacketTooShort` (dropped), a length bf-p4c
//! enumerates that is not whole bytes is refused at compile time, as is one of two variables,
//! and one it cannot enumerate (evaluated as written) that is not whole bytes is
//! `ParserInvalidArgument` (dropped).

use std::path::Path;
use std::sync::Arc;

use p4::compile::{compile_str, CompileOptions};
use pipeline::switch::{DropReason, InFrame, Switch, SwitchConfig};

fn switch(text: &str) -> Switch {
    let c = compile_str("varbit.p4", text, &CompileOptions::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch")
}

fn source() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/varbit.p4");
    std::fs::read_to_string(p).expect("varbit.p4")
}

/// A TLV frame (ethertype 0x88b5) of kind 0 with `len` in its length byte, `data` bytes of
/// body data, its tail byte and 48 bytes of payload.
fn tlv(len: u8, data: usize) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x88, 0xb5, 0, len, 0];
    f.extend(std::iter::repeat_n(0x11, data));
    f.push(0xee);
    f.extend([0xaa; 48]);
    f
}

/// What became of `frame`: the bytes out, or the drop reason and its detail.
fn run(sw: &mut Switch, frame: &[u8]) -> Result<Vec<u8>, (DropReason, Option<String>)> {
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port: 0,
            bytes: frame,
            ts: 1_000,
        }],
        &mut out,
    );
    match (out.pop(), sw.drain_drops().pop()) {
        (Some(f), None) => Ok(f.bytes.to_vec()),
        (None, Some(d)) => Err((d.reason, d.detail)),
        other => panic!("one frame or one drop expected: {other:?}"),
    }
}

/// Every drop counted so far.
fn drops(sw: &Switch) -> u64 {
    DropReason::ALL.iter().map(|r| sw.stats().dropped(*r)).sum()
}

#[test]
fn a_varbit_past_its_field_rejects_and_a_short_packet_drops() {
    let mut sw = switch(&source());
    assert!(
        run(&mut sw, &tlv(8, 8)).is_ok(),
        "64 bits fit the varbit<64>"
    );
    // Was HeaderTooShort (dropped): bf-p4c makes len = 9 a `reject` branch, and a reject ends
    // the Tofino parse without error. The body stays invalid: size = its tail byte alone.
    let out = run(&mut sw, &tlv(9, 9)).expect("a reject is forwarded");
    assert_eq!(out[14..17], [0, 9, 1], "kind, len, size");
    assert_eq!(out.len(), tlv(9, 9).len());
    assert_eq!(drops(&sw), 0);
    // 200 bytes are past the field too: a reject before the packet's length is looked at.
    assert!(run(&mut sw, &tlv(200, 8)).is_ok());
    assert_eq!(drops(&sw), 0);
    // 8 bytes of data announced, the frame ends after 3 (no padding to a minimum frame).
    let c = compile_str("varbit.p4", &source(), &CompileOptions::default()).expect("compiles");
    let cfg = SwitchConfig::new(1).with_min_frame(0);
    let mut sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
    let mut short = tlv(8, 3);
    short.truncate(17 + 3);
    assert_eq!(
        run(&mut sw, &short),
        Err((DropReason::ParserPacketTooShort, None))
    );
}

#[test]
fn an_enumerable_length_of_part_of_a_byte_is_refused() {
    // The TLV length counted in nibbles: 4 bits for len = 1 (was ParserInvalidArgument at run
    // time; bf-p4c refuses it for every value of len).
    let text = source().replace("(bit<32>)hdr.tlv.len * 8", "(bit<32>)hdr.tlv.len * 4");
    assert_ne!(text, source());
    let Err(f) = compile_str("varbit.p4", &text, &CompileOptions::default()) else {
        panic!("a length of 4 bits for len = 1 must be refused");
    };
    let err = f.render();
    assert!(
        err.contains("non byte-aligned value 4") && err.contains("when its variable is 1"),
        "{err}"
    );
}

#[test]
fn a_length_of_two_fields_is_refused() {
    // Was evaluated as written (ParserInvalidArgument for 12 bits): bf-p4c's
    // enumerate_varbit_field_values refuses a length with more than one variable.
    let text = source().replace(
        "(bit<32>)hdr.tlv.len * 8",
        "((bit<32>)hdr.tlv.len + (bit<32>)hdr.tlv.size) * 4",
    );
    assert_ne!(text, source());
    let Err(f) = compile_str("varbit.p4", &text, &CompileOptions::default()) else {
        panic!("a length of two fields must be refused");
    };
    let err = f.render();
    assert!(
        err.contains("contains more than one variable")
            && err.contains("`hdr.tlv.len` and `hdr.tlv.size`"),
        "{err}"
    );
}

#[test]
fn a_length_pisa_cannot_enumerate_of_part_of_a_byte_is_an_invalid_argument() {
    // A length from the next byte (a lookahead, not a field bf-p4c enumerates): pisa warns and
    // evaluates it as written; the body's first byte counts nibbles.
    let text = source().replace(
        "(bit<32>)hdr.tlv.len * 8",
        "(bit<32>)pkt.lookahead<bit<8>>() * 4",
    );
    assert_ne!(text, source());
    let mut sw = switch(&text);
    let mut frame = tlv(2, 2);
    frame[17] = 4;
    assert!(run(&mut sw, &frame).is_ok(), "16 bits are whole bytes");
    frame[17] = 3;
    assert_eq!(
        run(&mut sw, &frame),
        Err((DropReason::ParserInvalidArgument, None))
    );
}

#[test]
fn a_constant_length_of_zero_extracts_nothing() {
    // bf-p4c's RemoveZeroVarbitExtract drops `extract(h, 0)`: the body, tail byte included,
    // is not parsed, so kind 3 (body2 = body) copies an invalid header and the tail byte stays
    // payload (extracted, the body would come out twice).
    let text = source().replace("(bit<32>)hdr.tlv.len * 8", "0");
    assert_ne!(text, source());
    let mut sw = switch(&text);
    let mut frame = tlv(0, 0);
    frame[14] = 3;
    let out = run(&mut sw, &frame).expect("forwarded");
    assert_eq!(
        out[14..18],
        [3, 0, 1, 0xee],
        "kind, len, size, then the payload"
    );
    assert_eq!(out.len(), frame.len());
}

#[test]
fn a_length_of_a_slice_enumerates_the_slice() {
    // bf-p4c's variable is the slice (4 bits, 16 values); the whole 16-bit field has too many.
    let slice = source().replace(
        "(bit<32>)hdr.tlv.len * 8",
        "(bit<32>)hdr.ipv4.total_len[3:0] * 8",
    );
    let opts = CompileOptions::default();
    assert!(compile_str("varbit.p4", &slice, &opts).is_ok());
    let whole = source().replace(
        "(bit<32>)hdr.tlv.len * 8",
        "(bit<32>)hdr.ipv4.total_len * 8",
    );
    let Err(f) = compile_str("varbit.p4", &whole, &opts) else {
        panic!("65536 values must be refused");
    };
    assert!(
        f.render().contains("too many parser branches"),
        "{}",
        f.render()
    );
}
