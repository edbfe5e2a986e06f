//! Hardware fidelity: programs that used to compile and then behave differently from a Tofino
//! (issue 11, "silent wrongs"). Each test runs a small TNA program of `tests/fidelity/` through
//! the switch model and compares the output with bytes worked out by hand from the Tofino
//! behaviour it checks (the derivation is written next to each expectation), or with an
//! independent implementation (the `crc` crate), never with pisa's own output.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use p4::compile::{compile_file, CompileFailure, CompileOptions, Compiled};
use pipeline::ir::Target;
use pipeline::switch::{InFrame, OutFrame, Switch, SwitchConfig};

fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fidelity")
        .join(name)
}

fn try_compile(
    name: &str,
    target: Target,
    defines: &[(&str, &str)],
) -> Result<Compiled, CompileFailure> {
    let opts = CompileOptions {
        target,
        defines: defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    compile_file(&program(name), &opts)
}

fn compile(name: &str, target: Target, defines: &[(&str, &str)]) -> Compiled {
    try_compile(name, target, defines)
        .unwrap_or_else(|f| panic!("{name} does not compile:\n{}", f.render()))
}

fn switch(c: Compiled) -> Switch {
    Switch::new(Arc::new(c.program), config()).expect("switch")
}

/// One pipe whose ports 0–7, the ports these tests send to and read, are front-panel ports
/// (attached, as a harness adds them): on Tofino 2 they would loop back otherwise.
fn config() -> SwitchConfig {
    (0..8).fold(SwitchConfig::new(1), |c, p| c.with_front_panel(p))
}

fn send(sw: &mut Switch, port: u16, bytes: &[u8]) -> Vec<OutFrame> {
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port,
            bytes,
            ts: 1_000,
        }],
        &mut out,
    );
    out
}

/// `n` bytes 0, 1, 2, ... (a payload no header field of these programs is made of).
fn counting(n: usize) -> Vec<u8> {
    (0..n).map(|i| i as u8).collect()
}

/// An Ethernet frame to `dst` from `src` with `ether_type` and `payload`.
fn ethernet(dst: u64, src: u64, ether_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&ether_type.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

// ---- architecture vs target ----

/// `tna.p4` takes its device constants from the target, like Intel's header: on Tofino 1 the
/// port metadata is 64 bits, on Tofino 2 192 bits. The program writes PORT_METADATA_SIZE into
/// the EtherType; everything else must come out as it went in, which only happens when the
/// parser skipped exactly the port metadata the switch put in front of the packet.
#[test]
fn tna_picks_the_device_constants_of_the_target() {
    let payload = counting(50);
    let frame = ethernet(0x0a0b_0c0d_0e0f, 0x0203_0405_0607, 0x0800, &payload);
    for (target, size) in [(Target::Tofino1, 64u16), (Target::Tofino2, 192)] {
        let mut sw = switch(compile("port_metadata.p4", target, &[]));
        let out = send(&mut sw, 1, &frame);
        assert_eq!(out.len(), 1, "{target:?}: {:?}", sw.drain_drops());
        assert_eq!(out[0].port, 2);
        // By hand: the same frame with bytes 12..14 (EtherType) replaced by the constant.
        let want = ethernet(0x0a0b_0c0d_0e0f, 0x0203_0405_0607, size, &payload);
        assert_eq!(out[0].bytes, want, "{target:?}");
    }
}

#[test]
fn t2na_runs_on_tofino2() {
    let frame = ethernet(1, 2, 0x0800, &counting(50));
    let mut sw = switch(compile(
        "port_metadata.p4",
        Target::Tofino2,
        &[("T2NA", "1")],
    ));
    let out = send(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].bytes, ethernet(1, 2, 192, &counting(50)));
}

/// T2NA cannot run on Tofino 1 (Intel's t2na.p4 stops with `#error` there too): the program is
/// refused with the reason instead of compiling against the wrong port metadata.
#[test]
fn t2na_on_tofino1_is_refused_with_the_reason() {
    let f = try_compile("port_metadata.p4", Target::Tofino1, &[("T2NA", "1")])
        .expect_err("t2na.p4 must not compile for Tofino 1");
    let text = f.render();
    assert!(text.contains("t2na.p4"), "{text}");
    assert!(text.contains("--target tofino2"), "{text}");
}

/// `-D __TARGET_TOFINO__=2` with `--target tofino1` would pick Tofino 2 constants for a switch
/// modelled as Tofino 1: refused.
#[test]
fn a_target_define_that_contradicts_the_target_is_refused() {
    let f = try_compile(
        "port_metadata.p4",
        Target::Tofino1,
        &[("__TARGET_TOFINO__", "2")],
    )
    .expect_err("contradicting define");
    let text = f.render();
    assert!(text.contains("contradicts the target tofino1"), "{text}");
    // Agreeing with the target is fine.
    compile(
        "port_metadata.p4",
        Target::Tofino2,
        &[("__TARGET_TOFINO__", "2")],
    );
}

// ---- egress intrinsic metadata ----

/// An egress parser that extracts nothing: the egress intrinsic metadata the TM prepends is
/// removed by the hardware whatever the parser did (it replaces max(0, parsed - metadata
/// length) bytes of the packet), so the frame leaves exactly as it came in.
#[test]
fn unextracted_egress_intrinsic_metadata_never_reaches_the_wire() {
    let mut sw = switch(compile("egress_no_intrinsic.p4", Target::Tofino1, &[]));
    let frame = ethernet(0x0a, 0x0b, 0x0800, &counting(60));
    let out = send(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 2);
    assert_eq!(out[0].bytes, frame);
}

// ---- hash ----

/// Sends `data` = {a, b, c} with a zeroed `result` header through `hash.p4`; returns the `result`
/// header's fields (crc16_in_32, symmetric, crc64) and checks the rest came back unchanged.
fn hashes(sw: &mut Switch, a: u32, b: u32, c: u16) -> (u32, u16, u64) {
    let mut payload = Vec::new();
    payload.extend_from_slice(&a.to_be_bytes());
    payload.extend_from_slice(&b.to_be_bytes());
    payload.extend_from_slice(&c.to_be_bytes());
    payload.extend_from_slice(&[0; 14]);
    payload.extend_from_slice(&counting(30));
    let frame = ethernet(1, 2, 0x88b5, &payload);
    let out = send(sw, 1, &frame);
    assert_eq!(out.len(), 1);
    let o = &out[0].bytes;
    assert_eq!(o.len(), frame.len());
    assert_eq!(o[..24], frame[..24]);
    assert_eq!(o[38..], frame[38..]);
    let crc16_in_32 = u32::from_be_bytes(o[24..28].try_into().unwrap());
    let symmetric = u16::from_be_bytes(o[28..30].try_into().unwrap());
    let crc64 = u64::from_be_bytes(o[30..38].try_into().unwrap());
    (crc16_in_32, symmetric, crc64)
}

/// The hash input stream {a, b, c}: each field big-endian, first field first.
fn stream(fields: &[&[u8]]) -> Vec<u8> {
    fields.concat()
}

/// `HashAlgorithm_t.CRC16` is CRC-16/ARC and CRC64 is CRC-64/ECMA-182 (bf-utils' dynamic hash
/// tables); a 16-bit CRC in a 32-bit hash is repeated (output bit k = CRC bit k mod 16), not
/// zero-extended. Expected values from the `crc` crate's catalogue implementations.
#[test]
fn crc16_in_a_wider_hash_repeats_and_crc64_is_ecma() {
    let arc = crc::Crc::<u16>::new(&crc::CRC_16_ARC);
    let ecma = crc::Crc::<u64>::new(&crc::CRC_64_ECMA_182);
    let mut sw = switch(compile("hash.p4", Target::Tofino1, &[]));
    for (a, b) in [(0x0a00_0001u32, 0x0a00_0002u32), (0xdead_beef, 0x0123_4567)] {
        let (wide, _, h64) = hashes(&mut sw, a, b, 7);
        let s = stream(&[&a.to_be_bytes(), &b.to_be_bytes()]);
        let c16 = u32::from(arc.checksum(&s));
        assert_eq!(wide, c16 << 16 | c16, "a={a:#x} b={b:#x}");
        assert_eq!(h64, ecma.checksum(&s));
    }
}

/// `@symmetric("hdr.data.a", "hdr.data.b")`: swapping a and b leaves the hash unchanged, and
/// the value is the CRC with a ^ b in a's slot and zeros in b's (one hash-matrix input fed by
/// both fields) — before, the annotation was ignored with a warning that called it layout-only.
#[test]
fn symmetric_hash_is_symmetric() {
    let arc = crc::Crc::<u16>::new(&crc::CRC_16_ARC);
    let c = compile("hash.p4", Target::Tofino1, &[]);
    let warnings = c.warnings.render(&c.sources);
    assert!(!warnings.contains("symmetric"), "{warnings}");
    let mut sw = switch(c);
    let (a, b, c) = (0xc0a8_0001u32, 0x0a00_0063u32, 0x1234u16);
    let (_, ab, _) = hashes(&mut sw, a, b, c);
    let (_, ba, _) = hashes(&mut sw, b, a, c);
    assert_eq!(ab, ba);
    let s = stream(&[&(a ^ b).to_be_bytes(), &[0; 4], &c.to_be_bytes()]);
    assert_eq!(ab, arc.checksum(&s));
    // Not symmetric in the other field.
    let (_, other, _) = hashes(&mut sw, a, b, c ^ 1);
    assert_ne!(ab, other);
}

// ---- checksum ----

/// `Checksum.update({x, y}, true)`: a checksum that comes out 0x0000 is sent as 0xFFFF.
/// By hand: 0x1234 + 0xEDCB = 0xFFFF, whose ones' complement is 0x0000 (0xFFFF with
/// zeros_as_ones); 0x1234 + 0x0001 = 0x1235, complement 0xEDCA either way.
#[test]
fn checksum_update_honours_zeros_as_ones() {
    let c = compile("checksum_zeros.p4", Target::Tofino1, &[]);
    let warnings = c.warnings.render(&c.sources);
    assert!(!warnings.contains("zeros_as_ones"), "{warnings}");
    let mut sw = switch(c);
    for (x, y, plain, nonzero) in [
        (0x1234u16, 0xedcbu16, 0x0000u16, 0xffffu16),
        (0x1234, 0x0001, 0xedca, 0xedca),
    ] {
        let mut data = Vec::new();
        for v in [x, y, 0, 0] {
            data.extend_from_slice(&v.to_be_bytes());
        }
        data.extend_from_slice(&counting(46));
        let frame = ethernet(1, 2, 0x88b5, &data);
        let out = send(&mut sw, 1, &frame);
        assert_eq!(out.len(), 1);
        let mut want = frame.clone();
        want[18..20].copy_from_slice(&plain.to_be_bytes());
        want[20..22].copy_from_slice(&nonzero.to_be_bytes());
        assert_eq!(out[0].bytes, want, "x={x:#x} y={y:#x}");
    }
}

// ---- meter colours ----

/// `Meter(1, PACKETS, 0xAA, 0x55, 0x0F)`: the meter answers in the program's colours (red 0xAA,
/// yellow 0x55, green 0x0F), not TNA's default 3 / 1 / 0. The indexed meter is set to a
/// committed burst of 1 packet and a peak burst of 2 at 1 packet/s, so four packets at the
/// same instant are green, green, yellow, red (Tofino's meter: each reads the colour the
/// previous packet's update stored, and the buckets go negative: levels (0, 1) GREEN, (-1, 0)
/// YELLOW, (-1, -1) RED); the unconfigured direct meter passes everything as green.
#[test]
fn meters_return_the_programs_colour_values() {
    let c = compile("meter_colors.p4", Target::Tofino1, &[]);
    let warnings = c.warnings.render(&c.sources);
    assert!(!warnings.contains("color encodings"), "{warnings}");
    let mut sw = switch(c);
    let set = |sw: &mut Switch, name: &str, cbs: u64, pbs: u64| {
        sw.meter_set(
            pipeline::api::PipeSel::All,
            name,
            0,
            pipeline::externs::meter::MeterConfig {
                cir: 1,
                pir: 1,
                cbs,
                pbs,
            },
        )
        .unwrap();
    };
    set(&mut sw, "Ingress.policer", 1, 2);
    // `plain` passes 100 packets per burst: green (0), unless 32w3 were taken for a RED
    // pre-colour (which it used to be: 3).
    set(&mut sw, "Ingress.plain", 100, 100);
    let mut data = vec![0, 0, 0];
    data.extend(counting(46));
    let frame = ethernet(1, 2, 0x88b5, &data);
    for (indexed, direct) in [(0x0f, 0x0f), (0x0f, 0x0f), (0x55, 0x0f), (0xaa, 0x0f)] {
        let out = send(&mut sw, 1, &frame);
        assert_eq!(out.len(), 1);
        let mut want = frame.clone();
        want[14] = indexed;
        want[15] = direct;
        want[16] = 0;
        assert_eq!(out[0].bytes, want);
    }
}

/// A byte meter's count adjustment set at run time (BfRt's `MeterByteCountAdjust` table
/// attribute; `Switch::meter_byte_adjust_set`), on an indexed meter (named itself) and a direct
/// meter (named by its table), on every engine. Two 64-byte frames (68 bytes metered with the
/// FCS) on fresh meters with a committed burst of `cbs` bytes: the first reads GREEN and its
/// update leaves the committed bucket negative (yellow, 1, for the second) when the adjusted
/// length does not fit, else green (0). By hand: 68 > 60 yellow; 68 - 12 = 56 <= 60 green;
/// 68 <= 70 green; 68 + 20 = 88 > 70 yellow.
#[test]
fn meter_byte_count_adjustment_set_at_run_time() {
    use pipeline::api::PipeSel;
    use pipeline::externs::meter::MeterConfig;
    let c = compile("meter_byte_adjust.p4", Target::Tofino1, &[]);
    let program = Arc::new(c.program);
    let frame = ethernet(1, 2, 0x88b5, &counting(50));
    assert_eq!(frame.len(), 64);
    let cases = [
        (None::<i32>, None::<i32>, 60u64, 1u8, 1u8),
        (Some(-12), Some(-12), 60, 0, 0),
        (Some(-12), None, 60, 0, 1),
        (None, None, 70, 0, 0),
        (Some(20), Some(20), 70, 1, 1),
    ];
    for engine in ["tree", "flat", "native"] {
        for (indexed, direct, cbs, want_indexed, want_direct) in cases {
            let cfg = config().with_engine(engine.parse().expect("engine"));
            let mut sw = Switch::new(program.clone(), cfg).expect("switch");
            let m = MeterConfig {
                cir: 1,
                pir: 1,
                cbs,
                pbs: 1000,
            };
            sw.meter_set(PipeSel::All, "Ingress.by_index", 3, m)
                .unwrap();
            let key = [("hdr.ethernet.src_addr", pipeline::ir::KeyMatch::Exact(2))];
            sw.direct_meter_set(PipeSel::All, "Ingress.classify", &key, None, m)
                .unwrap();
            if let Some(b) = indexed {
                sw.meter_byte_adjust_set(PipeSel::All, "Ingress.by_index", b)
                    .unwrap();
            }
            if let Some(b) = direct {
                sw.meter_byte_adjust_set(PipeSel::All, "Ingress.classify", b)
                    .unwrap();
            }
            let first = send(&mut sw, 1, &frame);
            assert_eq!((first[0].bytes[14], first[0].bytes[15]), (0, 0), "{engine}");
            let out = send(&mut sw, 1, &frame);
            assert_eq!(out.len(), 1);
            let got = (out[0].bytes[14], out[0].bytes[15]);
            let case = (indexed, direct, cbs);
            assert_eq!(got, (want_indexed, want_direct), "{engine} {case:?}");
            // The direct meter reads back by its own name too.
            let read = sw
                .meter_byte_adjust(PipeSel::All, "Ingress.by_entry")
                .unwrap();
            assert_eq!(read, [(0, direct.unwrap_or(0))], "{engine}");
        }
    }
}

/// The adjustment is the meter ALU's 14-bit signed field: -8192..=8191, else an error; a
/// program's `adjust_byte_count` reads back negated (the compiler loads it so).
#[test]
fn meter_byte_count_adjustment_range_and_initial_value() {
    use pipeline::api::PipeSel;
    let mut sw = switch(compile("meter_byte_adjust.p4", Target::Tofino1, &[]));
    for ok in [-8192, 8191, 0] {
        sw.meter_byte_adjust_set(PipeSel::All, "Ingress.by_index", ok)
            .unwrap();
    }
    for bad in [-8193, 8192] {
        let e = sw
            .meter_byte_adjust_set(PipeSel::All, "Ingress.by_index", bad)
            .unwrap_err();
        assert!(e.to_string().contains("-8192..=8191"), "{e}");
    }
    assert!(sw
        .meter_byte_adjust_set(PipeSel::All, "Ingress.nothing", 1)
        .is_err());
    let sw = switch(compile("byte_count.p4", Target::Tofino1, &[]));
    let read = sw
        .meter_byte_adjust(PipeSel::All, "Ingress.ig_meter")
        .unwrap();
    assert_eq!(read, [(0, -40)]);
}

// ---- minimum frame size ----

/// A 42-byte frame (shorter than Ethernet's 60 + 4 FCS) arrives as the sender's MAC would put
/// it on the wire, padded with zeros to 60 bytes: the program's 36-byte header then parses
/// (28 bytes of it from the frame, 8 from the padding) and the frame is forwarded, where pisa
/// used to drop it as parser_packet_too_short. By hand: out = the 42 bytes + 18 zero bytes.
#[test]
fn a_runt_is_padded_to_the_minimum_frame_not_dropped() {
    let mut sw = switch(compile("runt.p4", Target::Tofino1, &[]));
    let frame = ethernet(1, 2, 0x88b5, &counting(28));
    assert_eq!(frame.len(), 42);
    let out = send(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1, "{:?}", sw.drain_drops());
    let mut want = frame.clone();
    want.resize(60, 0);
    assert_eq!(out[0].bytes, want);
    assert_eq!(sw.stats().total_drops(), 0);
}

/// Egress removes a 20-byte tunnel header from a 64-byte frame: 44 bytes leave, and the MAC
/// pads them to 60. By hand: Ethernet header, the 30 payload bytes, 16 zero bytes.
#[test]
fn a_frame_made_short_is_padded_on_transmission() {
    let mut sw = switch(compile("runt.p4", Target::Tofino1, &[]));
    let mut payload = vec![0xee; 20];
    payload.extend_from_slice(&counting(30));
    let frame = ethernet(1, 2, 0x88b6, &payload);
    assert_eq!(frame.len(), 64);
    let out = send(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    let mut want = ethernet(1, 2, 0x88b6, &counting(30));
    want.resize(60, 0);
    assert_eq!(out[0].bytes, want);
}

/// Silent spots made loud: a mirror header longer than the 32 bytes Tofino carries is cut by
/// pisa, and the compiler says so.
#[test]
fn an_oversized_mirror_header_is_warned_about() {
    let c = compile("runt.p4", Target::Tofino1, &[]);
    let warnings = c.warnings.render(&c.sources);
    assert!(
        warnings.contains("mirror header of 36 bytes is longer than the 32 bytes Tofino carries"),
        "{warnings}"
    );
}

// ---- byte accounting: adjust_byte_count, true_egress_accounting ----

/// `(packets, bytes)` of cell 0 of indexed counter `name`.
fn counter0(sw: &Switch, name: &str) -> (u64, u64) {
    let v = sw
        .counter_read(pipeline::api::PipeSel::All, name, 0)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (v[0].packets, v[0].bytes)
}

/// The frames of the byte-count tests: two 64-byte frames from MAC 2 (egress adds a 4-byte
/// tag: 68 bytes leave), then a 150-byte frame carrying a tag (egress takes it off: 146 leave).
fn byte_count_frames() -> [Vec<u8>; 3] {
    let a = ethernet(1, 2, 0x0800, &counting(50));
    let mut tagged = vec![0x11, 0x22, 0x08, 0x00];
    tagged.extend(counting(132));
    let c = ethernet(1, 2, 0x9000, &tagged);
    assert_eq!((a.len(), c.len()), (64, 150));
    [a.clone(), a, c]
}

/// Runs the byte-count frames through `byte_count.p4` on `engine`; returns the switch and the
/// frames that left.
fn run_byte_count(
    target: Target,
    defines: &[(&str, &str)],
    engine: &str,
) -> (Switch, Vec<Vec<u8>>) {
    let c = compile("byte_count.p4", target, defines);
    let cfg = config().with_engine(engine.parse().expect("engine"));
    let mut sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
    let set = |sw: &mut Switch, name: &str, cbs: u64| {
        let cfg = pipeline::externs::meter::MeterConfig {
            cir: 1,
            pir: 1,
            cbs,
            pbs: 1000,
        };
        sw.meter_set(pipeline::api::PipeSel::All, name, 0, cfg)
            .unwrap();
    };
    set(&mut sw, "Ingress.ig_meter", 30);
    if !defines.is_empty() {
        set(&mut sw, "Egress.eg_meter", 70);
    }
    let mut outs = Vec::new();
    for f in byte_count_frames() {
        let out = send(&mut sw, 1, &f);
        assert_eq!(out.len(), 1, "{engine}");
        outs.push(out[0].bytes.clone());
    }
    (sw, outs)
}

/// The expected output of a 64-byte frame: the tag (0xab, egress colour, the old EtherType)
/// after the Ethernet header, then the ingress colour in place of the first payload byte.
fn tagged_64(eg_color: u8, ig_color: u8) -> Vec<u8> {
    let mut want = ethernet(1, 2, 0x9000, &[0xab, eg_color, 0x08, 0x00, ig_color]);
    want.extend_from_slice(&counting(50)[1..]);
    want
}

/// `adjust_byte_count` takes its bytes off every packet, down to 0, on Tofino 1 and every
/// engine. Lengths include the 4-byte FCS, as the hardware counts them (pisa's frames carry
/// none). By hand, frames of 64, 64 and 150 bytes (68, 68, 154 counted): `ig_whole` 3
/// packets, 290 bytes; `count(0, 20)` 48 + 48 + 134 = 230; the direct counter's `count(100)`
/// 0 + 0 + 54 = 54 (3 packets); egress (no true egress accounting on Tofino 1) counts what it
/// received, 290. The byte meter's `execute(0, 40)` with a committed burst of 30 bytes: the
/// first packet reads GREEN and measures 28 bytes, leaving 2 (GREEN for the second, 0);
/// without the adjustment it would leave -38 and the second would read YELLOW.
#[test]
fn adjust_byte_count_is_taken_off_every_packet() {
    for engine in ["tree", "flat", "native"] {
        let (sw, outs) = run_byte_count(Target::Tofino1, &[], engine);
        assert_eq!(outs[0], tagged_64(0, 0), "{engine}");
        assert_eq!(outs[1], tagged_64(0, 0), "{engine}");
        assert_eq!(outs[2], ethernet(1, 2, 0x0800, &counting(132)), "{engine}");
        assert_eq!(counter0(&sw, "Ingress.ig_whole"), (3, 290), "{engine}");
        assert_eq!(counter0(&sw, "Ingress.ig_adjusted"), (3, 230), "{engine}");
        assert_eq!(counter0(&sw, "Egress.eg_entry"), (3, 290), "{engine}");
        let direct = sw
            .direct_counter_read(
                pipeline::api::PipeSel::All,
                "Ingress.classify",
                &[("hdr.ethernet.src_addr", pipeline::ir::KeyMatch::Exact(2))],
                None,
            )
            .expect("direct counter");
        assert_eq!((direct[0].packets, direct[0].bytes), (3, 54), "{engine}");
    }
}

/// Tofino 2's `true_egress_accounting`: an indexed or direct counter measures the packet the
/// egress deparser sends, FCS included. By hand: 72 + 72 + 150 = 294 bytes where egress
/// received 290; less 10 bytes a packet (`count(0, 10)`) 62 + 62 + 140 = 264. The true-egress
/// byte meter (committed burst 70) is charged the 72 bytes sent: the first packet reads GREEN
/// and leaves -2, so the second reads YELLOW; charged the 68 received it would have left 2 and
/// the second would be green.
#[test]
fn true_egress_accounting_counts_what_egress_sends() {
    for engine in ["tree", "flat", "native"] {
        let (sw, outs) = run_byte_count(Target::Tofino2, &[("TRUE_EGRESS", "1")], engine);
        assert_eq!(outs[0], tagged_64(0, 0), "{engine}");
        assert_eq!(outs[1], tagged_64(1, 0), "{engine}");
        assert_eq!(outs[2], ethernet(1, 2, 0x0800, &counting(132)), "{engine}");
        assert_eq!(counter0(&sw, "Egress.eg_entry"), (3, 290), "{engine}");
        assert_eq!(counter0(&sw, "Egress.eg_true"), (3, 294), "{engine}");
        assert_eq!(
            counter0(&sw, "Egress.eg_true_adjusted"),
            (0, 264),
            "{engine}"
        );
        assert_eq!(counter0(&sw, "Ingress.ig_whole"), (3, 290), "{engine}");
        let direct = sw
            .direct_counter_read(
                pipeline::api::PipeSel::All,
                "Egress.eg_classify",
                &[("hdr.ethernet.src_addr", pipeline::ir::KeyMatch::Exact(2))],
                None,
            )
            .expect("direct counter");
        assert_eq!((direct[0].packets, direct[0].bytes), (3, 294), "{engine}");
    }
}

/// The IR printer shows what each counter and meter measures.
#[test]
fn the_ir_shows_byte_accounting() {
    let c = compile("byte_count.p4", Target::Tofino2, &[("TRUE_EGRESS", "1")]);
    let text = pipeline::ir_text::program_text(&c.program);
    for line in [
        "counter Ingress.ig_adjusted PacketsAndBytes size 1 adjust_byte_count 20\n",
        "counter Egress.eg_true PacketsAndBytes size 1 true_egress_accounting\n",
        "counter Egress.eg_true_adjusted Bytes size 1 adjust_byte_count 10 true_egress_accounting\n",
        "meter Ingress.ig_meter Bytes size 1 adjust_byte_count 40\n",
        "counter Egress.eg_entry PacketsAndBytes size 1\n",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// bf-p4c refuses true egress accounting outside egress and on packet counting; pisa does too,
/// pointing at the argument.
#[test]
fn true_egress_accounting_is_refused_where_bf_p4c_refuses_it() {
    let text = std::fs::read_to_string(program("byte_count.p4")).expect("read");
    for (from, to, want) in [
        (
            "DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES) ig_direct;",
            "DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES, true) ig_direct;",
            "`DirectCounter`: true egress accounting is only available on egress",
        ),
        (
            "(1, CounterType_t.PACKETS_AND_BYTES, true) eg_true;",
            "(1, CounterType_t.PACKETS, true) eg_true;",
            "`Counter`: true egress accounting is only valid for counting bytes",
        ),
        (
            "Meter<bit<1>>(1, MeterType_t.BYTES, true) eg_meter;",
            "Meter<bit<1>>(1, MeterType_t.PACKETS, true) eg_meter;",
            "`Meter`: true egress accounting is only valid for counting bytes",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let opts = CompileOptions {
            target: Target::Tofino2,
            defines: vec![("TRUE_EGRESS".into(), "1".into())],
            ..CompileOptions::default()
        };
        let bad = text.replace(from, to);
        let f = p4::compile::compile_str("byte_count.p4", &bad, &opts)
            .err()
            .unwrap_or_else(|| panic!("{to} should be refused"));
        let r = f.render();
        assert!(r.contains(want), "{r}");
        let line = bad.lines().position(|l| l.contains(to)).expect("line") + 1;
        assert!(r.contains(&format!("byte_count.p4:{line}:")), "{r}");
    }
}

// ---- digests ----

/// Two `Digest.pack`s under digest entry 1 (`tests/fidelity/digest_one_per_entry.p4`): the chip
/// sends one learn quantum per packet, the first field list bf-p4c kept for the entry
/// (`ExtractDeparser::generateDigest` drops the second), so only `d1` reaches the control plane,
/// with its fields in struct order (f = 0x1234 and a = 0xab from the packet), on every engine.
#[test]
fn only_the_first_digest_of_an_entry_is_sent() {
    use pipeline::exec::EngineKind;
    for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::default()] {
        let c = compile("digest_one_per_entry.p4", Target::Tofino1, &[]);
        assert!(
            c.warnings.render(&c.sources).contains("`d2.pack` dropped"),
            "the drop is warned about"
        );
        let mut sw =
            Switch::new(Arc::new(c.program), config().with_engine(engine)).expect("switch");
        // h: a = 0xab, b = 0xcd, f = 0x1234, x = 0x01020304.
        let out = send(&mut sw, 0, &[0xab, 0xcd, 0x12, 0x34, 1, 2, 3, 4]);
        assert_eq!(out.len(), 1, "{engine}: the packet goes to port 1");
        let d = sw.digest_drain();
        assert_eq!(d.len(), 1, "{engine}: one digest per packet");
        assert_eq!(d[0].name, "ID.d1", "{engine}");
        assert_eq!(d[0].values, vec![0x1234, 0xab], "{engine}");
    }
}

/// A digest selected by a metadata field (`tests/fidelity/digest_select_on_metadata.p4`:
/// `if (md.m == 1) d1.pack(..)`, ingress sets `md.m = hdr.h.a` and never writes
/// `digest_type`): bf-p4c's learning selector is the compared field
/// (`ExtractDeparser::getDigestIndex`), so a packet with a = 1 sends d1 (f = 0x1234, a = 1)
/// and one with a = 2 sends nothing, on every engine.
#[test]
fn a_digest_selected_by_a_metadata_field_is_sent() {
    use pipeline::exec::EngineKind;
    for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::default()] {
        let c = compile("digest_select_on_metadata.p4", Target::Tofino1, &[]);
        let mut sw =
            Switch::new(Arc::new(c.program), config().with_engine(engine)).expect("switch");
        assert_eq!(send(&mut sw, 0, &[1, 0, 0x12, 0x34, 0, 0, 0, 0]).len(), 1);
        let d = sw.digest_drain();
        assert_eq!(d.len(), 1, "{engine}: md.m = 1 selects entry 1");
        assert_eq!(
            (d[0].name.as_str(), &d[0].values[..]),
            ("ID.d1", &[0x1234, 1][..])
        );
        assert_eq!(send(&mut sw, 0, &[2, 0, 0x12, 0x34, 0, 0, 0, 0]).len(), 1);
        assert!(
            sw.digest_drain().is_empty(),
            "{engine}: md.m = 2 selects nothing"
        );
    }
}

/// `invalidate` / `is_validated` act on a PHV container's valid bit, which Tofino 2 does not
/// have (its containers start valid, `invalidate` is an illegal ALU instruction): the Tofino 1
/// check `conformance/field_invalidate.p4` is refused for Tofino 2 with the reason; for
/// Tofino 1 it compiles with the warning that says pisa tracks the bit per field.
#[test]
fn field_validity_is_tofino1_only_and_warns_of_its_approximation() {
    let f = try_compile("../conformance/field_invalidate.p4", Target::Tofino2, &[])
        .expect_err("invalidate has no Tofino 2 form");
    let text = f.render();
    assert!(text.contains("no meaning on Tofino 2"), "{text}");
    let c = compile("../conformance/field_invalidate.p4", Target::Tofino1, &[]);
    let w = c.warnings.render(&c.sources);
    assert!(w.contains("per field, the chip per PHV container"), "{w}");
}
