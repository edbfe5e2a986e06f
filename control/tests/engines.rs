//! Differential tests of the engines on every bundled program (`p4/programs/*.p4`): the native
//! engine (machine code generated at load time), the flat engine and the tree interpreter (the
//! reference) must give bit-identical frames, and end with the same counters, registers,
//! meters and table hit/miss counts. Traced (`Switch::trace`, what `pisa trace` runs), the
//! native engine's traced code and the flat engine must record the tree interpreter's trace,
//! event by event, and give the same frames as untraced.
//!
//! The language conformance programs (`p4/tests/lang/`) run the same way. Each program is
//! driven by each of its STF scripts (table writes, multicast, mirroring and
//! the script's packets, whose expectations must hold on both untraced engines), or by its
//! table file when it has no script, and then by random packets: the script's packets with
//! random bytes changed, cut short or grown, on random ports.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use control::stf::{self, StfOptions, Stmt};
use pipeline::exec::EngineKind;
use pipeline::ir::Program;
use pipeline::switch::{InFrame, Switch};

thread_local! {
    /// The kinds of trace events the reference recorded in this test's thread.
    static SEEN: std::cell::RefCell<std::collections::BTreeSet<String>> = Default::default();
}

/// An event's kind (its variant's name).
fn kind(e: &pipeline::trace::TraceEvent) -> String {
    let d = format!("{e:?}");
    d.split([' ', '(', '{'])
        .next()
        .unwrap_or_default()
        .to_string()
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs")
}

fn compile(path: &Path) -> Arc<Program> {
    let opts = p4::compile::CompileOptions::default();
    let compiled = p4::compile::compile_file(path, &opts)
        .unwrap_or_else(|e| panic!("{} does not compile:\n{}", path.display(), e.render()));
    Arc::new(compiled.program)
}

/// xorshift64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A switch on `engine` built as `pisa stf` builds it (with the CPU port), asserted to really
/// run the engine, traced or not.
fn switch(program: &Arc<Program>, engine: EngineKind) -> Switch {
    let cfg = StfOptions::default().config.with_engine(engine);
    let sw = Switch::new(program.clone(), cfg).expect("switch");
    assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
    assert_eq!(sw.traced_engine(), engine);
    sw
}

/// Everything a pass can leave behind, in a comparable form.
fn state(sw: &Switch) -> String {
    let mut s = String::new();
    for p in sw.pipe_states() {
        for t in &p.tables {
            s += &format!("table {} {}\n", t.hits.get(), t.misses.get());
        }
        for c in &p.rt.counters {
            s += &format!("counter {:?} {:?}\n", c.packets(), c.bytes());
        }
        for r in &p.rt.registers {
            s += &format!("register {:?} {:?}\n", r.lo, r.hi);
        }
        s += &format!("meters {:?}\n", p.rt.meters);
    }
    s += &format!("{:?}\n", sw.stats());
    s
}

/// Random variations of `seeds` (the script's packets) on random ports.
fn random_packets(seeds: &[(u16, Vec<u8>)], r: &mut Rng, n: usize) -> Vec<(u16, Vec<u8>)> {
    (0..n)
        .map(|_| {
            let (port, base) = &seeds[r.below(seeds.len() as u64) as usize];
            let mut p = base.clone();
            for _ in 0..r.below(4) {
                if !p.is_empty() {
                    let i = r.below(p.len() as u64) as usize;
                    p[i] = r.next() as u8;
                }
            }
            match r.below(8) {
                0 => p.truncate(r.below(p.len() as u64 + 1) as usize),
                1 => p.extend((0..r.below(40)).map(|_| r.next() as u8)),
                _ => {}
            }
            let port = if r.below(4) == 0 {
                r.below(8) as u16
            } else {
                *port
            };
            (port, p)
        })
        .collect()
}

/// Runs `setup` on native and flat switches (untraced and traced) and a tree-reference switch
/// (traced), then `packets`, comparing frames, traces and the state left.
fn compare(
    name: &str,
    program: &Arc<Program>,
    setup: &dyn Fn(&mut Switch),
    packets: &[(u16, Vec<u8>)],
) {
    let mut native = switch(program, EngineKind::Native);
    let mut native_traced = switch(program, EngineKind::Native);
    let mut flat = switch(program, EngineKind::Flat);
    let mut flat_traced = switch(program, EngineKind::Flat);
    let mut tree = switch(program, EngineKind::Tree);
    for sw in [
        &mut native,
        &mut native_traced,
        &mut flat,
        &mut flat_traced,
        &mut tree,
    ] {
        setup(sw);
    }
    assert_eq!(state(&native), state(&flat), "{name}: after the setup");
    let frames: Vec<InFrame<'_>> = packets
        .iter()
        .enumerate()
        .map(|(i, (port, bytes))| InFrame {
            port: *port,
            bytes,
            ts: 1000 * (i as u64 + 1),
        })
        .collect();
    let mut one_at_a_time = Vec::new();
    for (i, frame) in frames.iter().copied().enumerate() {
        let port = frame.port;
        let at = format!("{name}: packet {i} on port {port}");
        let mut a = Vec::new();
        native.process(frame, &mut |o| a.push(o));
        one_at_a_time.extend(a.iter().cloned());
        let mut b = Vec::new();
        flat.process(frame, &mut |o| b.push(o));
        let (c, reference) = tree.trace(frame);
        SEEN.with(|s| s.borrow_mut().extend(reference.events.iter().map(kind)));
        assert_eq!(a, b, "{at}: native vs flat");
        assert_eq!(a, c, "{at}: native vs tree");
        for (engine, sw) in [("native", &mut native_traced), ("flat", &mut flat_traced)] {
            let (d, t) = sw.trace(frame);
            assert_eq!(a, d, "{at}: {engine} traced vs untraced");
            for (k, (x, y)) in t.events.iter().zip(&reference.events).enumerate() {
                assert_eq!(
                    x, y,
                    "{at}: event {k}, {engine} vs tree:\n{t}\nvs\n{reference}"
                );
            }
            assert_eq!(t, reference, "{at}: trace, {engine} vs tree");
        }
    }
    let batched = batched(program, setup, &frames);
    assert_eq!(
        batched.0, one_at_a_time,
        "{name}: native batched vs one at a time"
    );
    for (engine, sw) in [
        ("flat", &flat),
        ("tree", &tree),
        ("native traced", &native_traced),
        ("flat traced", &flat_traced),
        ("native batched", &batched.1),
    ] {
        assert_eq!(
            state(&native),
            state(sw),
            "{name}: state, native vs {engine}"
        );
    }
}

/// `frames` through a native switch (after `setup`) in batches (`Switch::process_batch`) of
/// sizes 1, 7 and 32 in turn: the frames out, and the switch for its state. A batch must give
/// what the same frames give one at a time, in the same order, and leave the same counters,
/// registers and meters (stateful programs: registers read and written across packets).
fn batched(
    program: &Arc<Program>,
    setup: &dyn Fn(&mut Switch),
    frames: &[InFrame<'_>],
) -> (Vec<pipeline::switch::OutFrame>, Switch) {
    let mut sw = switch(program, EngineKind::Native);
    setup(&mut sw);
    let mut out = Vec::new();
    let mut rest = frames;
    for n in [1, 7, 32].into_iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (batch, more) = rest.split_at(n.min(rest.len()));
        sw.process_batch(batch, &mut out);
        rest = more;
    }
    (out, sw)
}

fn scripts(program: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(programs_dir().join("tests"))
        .expect("p4/programs/tests exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "stf")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{program}_")))
        })
        .collect();
    v.sort();
    v
}

/// One STF script on every engine, then random packets grown from its own: scripts that write
/// no table take the program's table file `tables` when it exists; with `always`, scripts that
/// write tables take it too (the language programs' files set what STF cannot, such as meter
/// rates, and `control/tests/stf.rs` applies them the same way).
fn run_script(program: &Arc<Program>, f: &Path, tables: &Path, always: bool, r: &mut Rng) {
    let text = std::fs::read_to_string(f).expect("script");
    let stmts = stf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    let seeds: Vec<(u16, Vec<u8>)> = stmts
        .iter()
        .filter_map(|s| match &s.stmt {
            Stmt::Packet { port, data } => Some((*port, data.clone())),
            _ => None,
        })
        .collect();
    let writes = stmts
        .iter()
        .any(|s| matches!(s.stmt, Stmt::Add { .. } | Stmt::SetDefault { .. }));
    let file = ((always || !writes) && tables.exists())
        .then(|| control::tables_file::load(tables).expect("table file"));
    let setup = |sw: &mut Switch| {
        if let Some(file) = &file {
            control::tables_file::apply(sw, file).expect("table file applies");
        }
        let report = stf::run_stf_on(sw, &stmts, &StfOptions::default());
        assert!(
            report.all_passed(),
            "{} on {:?}:\n{report}",
            f.display(),
            sw.engine()
        );
    };
    let packets = random_packets(&seeds, r, 60);
    compare(&f.display().to_string(), program, &setup, &packets);
}

/// The language conformance programs (`p4/tests/lang/NAME.p4`, one construct each) with their
/// `NAME.stf` and `NAME.tables.yaml`, on every engine.
#[test]
fn every_language_program_runs_the_same_on_every_engine() {
    let dir = programs_dir().join("../tests/lang");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("p4/tests/lang exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    programs.sort();
    assert!(programs.len() >= 10, "{programs:?}");
    let mut r = Rng(0x1a46_0000_5eed_0002);
    for path in programs {
        let program = compile(&path);
        let stf = path.with_extension("stf");
        if stf.exists() {
            run_script(
                &program,
                &stf,
                &path.with_extension("tables.yaml"),
                true,
                &mut r,
            );
        }
    }
}

#[test]
fn every_program_runs_the_same_on_every_engine() {
    let mut programs: Vec<PathBuf> = std::fs::read_dir(programs_dir())
        .expect("p4/programs exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    programs.sort();
    assert!(programs.len() >= 4, "{programs:?}");
    let mut r = Rng(0x0e4e_1e5a_5eed_0001);
    for path in programs {
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("name");
        let program = compile(&path);
        let files = scripts(stem);
        for f in &files {
            run_script(
                &program,
                f,
                &programs_dir().join(format!("{stem}.tables.yaml")),
                false,
                &mut r,
            );
        }
        if files.is_empty() {
            let tables = programs_dir().join(format!("{stem}.tables.yaml"));
            let file = tables
                .exists()
                .then(|| control::tables_file::load(&tables).expect("table file"));
            let setup = |sw: &mut Switch| {
                if let Some(file) = &file {
                    control::tables_file::apply(sw, file).expect("table file applies");
                }
            };
            let eth = vec![
                0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 8, 0, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
                10, 0, 0, 1, 10, 0, 0, 2,
            ];
            let seeds: Vec<(u16, Vec<u8>)> = (0..4).map(|p| (p, eth.clone())).collect();
            let packets = random_packets(&seeds, &mut r, 100);
            compare(stem, &program, &setup, &packets);
        }
    }
    // The bundled programs reach every trace point of a pass but `exit` (none uses it) and
    // `reject` (they reject through parser errors); the random programs of the pipeline's
    // differential tests reach those.
    let seen = SEEN.with(|s| s.borrow().clone());
    eprintln!("trace events compared: {seen:?}");
    for k in [
        "GressStart",
        "ParserState",
        "Extract",
        "ParserError",
        "ParserAccept",
        "Gateway",
        "Table",
        "Action",
        "DropMarked",
        "Register",
        "Deparsed",
    ] {
        assert!(seen.contains(k), "no {k} event in any trace: {seen:?}");
    }
}

/// What the native code leaves to the flat engine in every bundled and conformance program
/// (`pisa check --native` prints the same list). `wire.p4`, `l2l3.p4`, `fib.p4`, `fabric.p4`,
/// `p4ce.p4`, `onepipe.p4`, `mcrdma.p4` and `switch.p4` run fully native (their RegisterActions,
/// digests, mirror requests and meters are generated); elsewhere only statements and
/// expressions the generator does not take yet remain (other stateful externs, resubmit,
/// header stacks, ...), never an op or
/// a flat node of a kind it generates (a field, a table apply, an operator) left behind by a
/// shape it does not handle.
#[test]
fn native_code_leaves_only_externs_to_the_flat_engine() {
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in [programs_dir(), programs_dir().join("../tests/lang")] {
        paths.extend(
            std::fs::read_dir(&dir)
                .expect("program directory")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "p4")),
        );
    }
    paths.sort();
    let not_generated = [
        "stmt RegisterExecute",
        "stmt RegisterClear",
        "stmt ResubmitEmit",
        "stmt PktgenEmit",
        "stmt ExtractNext",
        "stmt ExtractVarbit",
        "stmt StackShift",
        "stmt ChecksumDeposit",
        "stmt CounterRange",
        "stmt Emit",
        "expr RegisterExecute",
        "expr Random",
        "expr FilterExecute",
        "expr MathUnit",
    ];
    for path in paths {
        let program = compile(&path);
        let sw = switch(&program, EngineKind::Native);
        let kinds = sw.native_fallback_kinds();
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        eprintln!("{name}: {kinds:?}");
        if [
            "wire.p4",
            "l2l3.p4",
            "fib.p4",
            "fabric.p4",
            "p4ce.p4",
            "onepipe.p4",
            "mcrdma.p4",
            "switch.p4",
            "native_wide.p4",
        ]
        .contains(&name)
        {
            assert!(kinds.is_empty(), "{name} is not fully native: {kinds:?}");
        }
        if path.parent() == Some(programs_dir().as_path()) {
            assert!(
                !kinds.iter().any(|k| k.0.contains("Register")),
                "{name} leaves a register action to the flat engine: {kinds:?}"
            );
        }
        for (k, _) in &kinds {
            assert!(
                not_generated.contains(&k.as_str()),
                "{name}: the generator left `{k}` to the flat engine"
            );
        }
    }
}
