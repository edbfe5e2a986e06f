//! The two-argument extract's errors (P4_16 §12.8.2) on `tests/lang/varbit.p4`: a varbit
//! longer than its field is `HeaderTooShort`, a packet shorter than the length says
//! `PacketTooShort`, a length that is not whole bytes `ParserInvalidArgument` (the check the
//! spec lets a target add; Tofino extracts bytes). Each drops the packet and is counted, the
//! two varbit errors as parser `verify`s (what bf-p4c turns them into) with the error named.

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

#[test]
fn varbit_extract_errors_drop_with_their_kind() {
    let mut sw = switch(&source());
    assert!(
        run(&mut sw, &tlv(8, 8)).is_ok(),
        "64 bits fit the varbit<64>"
    );
    assert_eq!(
        run(&mut sw, &tlv(9, 9)),
        Err((DropReason::ParserVerify, Some("HeaderTooShort".into())))
    );
    // 200 bytes of data announced, the frame holds 66 after the TLV header.
    assert_eq!(
        run(&mut sw, &tlv(200, 8)),
        Err((DropReason::ParserPacketTooShort, None))
    );
}

#[test]
fn a_varbit_length_of_part_of_a_byte_is_an_invalid_argument() {
    // The same program with the TLV length counted in nibbles.
    let text = source().replace("(bit<32>)hdr.tlv.len * 8", "(bit<32>)hdr.tlv.len * 4");
    assert_ne!(text, source());
    let mut sw = switch(&text);
    assert!(run(&mut sw, &tlv(4, 2)).is_ok(), "16 bits are whole bytes");
    assert_eq!(
        run(&mut sw, &tlv(3, 2)),
        Err((
            DropReason::ParserVerify,
            Some("ParserInvalidArgument".into())
        ))
    );
}
