//! Every fuzz target over its committed seeds (`fuzz/seeds/NAME/`, inputs libFuzzer's long runs
//! kept for new coverage) and deterministic mutations of them, in the workspace's ordinary test
//! build: CI's fuzz smoke without cargo-fuzz's instrumented build of every crate. A panic names
//! the target and keeps the input under the test's temporary folder for `cargo fuzz run NAME
//! FILE`; an input still running after a minute aborts the run, named (a hang).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use fuzz_targets::TARGETS;

/// Mutated inputs per seed; each is one to four stacked mutations.
const MUTATIONS_PER_SEED: usize = 16;
/// Longest an input may run (a debug build) before the replay counts it as a hang.
const HANG: Duration = Duration::from_secs(60);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The target's seeds, in name order (the replay is the same on every run).
fn seeds(name: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir().join("seeds").join(name);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.expect("a seed's directory entry").path();
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (
                path.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                data,
            )
        })
        .collect();
    out.sort();
    out
}

/// A small deterministic mutator (libFuzzer's needs the instrumented build this test avoids):
/// bit flips, boundary bytes, truncation, insertion, duplicated ranges and splices.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn mutate(&mut self, input: &[u8], other: &[u8]) -> Vec<u8> {
        let mut v = input.to_vec();
        for _ in 0..1 + self.below(4) {
            self.once(&mut v, other);
        }
        v
    }
    fn once(&mut self, v: &mut Vec<u8>, other: &[u8]) {
        let at = self.below(v.len());
        match self.below(6) {
            0 if !v.is_empty() => v[at] ^= 1 << self.below(8),
            1 if !v.is_empty() => v[at] = [0, 1, 0x7f, 0x80, 0xff][self.below(5)],
            2 => v.truncate(at),
            3 => v.insert(at.min(v.len()), self.next() as u8),
            4 if v.len() < 1 << 16 => {
                let end = at + self.below(v.len() - at + 1);
                let copy = v[at..end].to_vec();
                v.splice(at..at, copy);
            }
            _ => {
                let cut = self.below(other.len() + 1);
                v.truncate(at);
                v.extend_from_slice(&other[cut..]);
            }
        }
    }
}

/// Keeps a failing input where `cargo fuzz run` can be pointed at it.
fn keep(name: &str, label: &str, data: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-replay")
        .join(name);
    let path = dir.join(label);
    let _ = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, data));
    path
}

/// Runs `name` over its seeds and their mutations; fails on the first panic, aborts on a hang.
fn replay(name: &str) {
    let run = TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("{name} is not in fuzz_targets::TARGETS"));
    let seeds = seeds(name);
    assert!(!seeds.is_empty(), "fuzz/seeds/{name}/ holds no seed");
    let mut inputs: Vec<(String, Vec<u8>)> = vec![("empty".into(), Vec::new())];
    inputs.extend(seeds.iter().cloned());
    let mut m = Mutator(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    for (i, (seed, data)) in seeds.iter().enumerate() {
        for k in 0..MUTATIONS_PER_SEED {
            let other = &seeds[(i + 1 + k) % seeds.len()].1;
            inputs.push((format!("{seed}.m{k}"), m.mutate(data, other)));
        }
    }
    let (beat, watch) = mpsc::channel::<(String, Vec<u8>)>();
    let watchdog = std::thread::spawn({
        let name = name.to_owned();
        move || {
            let mut current = None;
            loop {
                match watch.recv_timeout(HANG) {
                    Ok(input) => current = Some(input),
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let (label, data) = current.unwrap_or_default();
                        let path = keep(&name, &label, &data);
                        eprintln!("fuzz target {name} hung (> {HANG:?}) on {}", path.display());
                        std::process::abort();
                    }
                }
            }
        }
    });
    for (label, data) in &inputs {
        beat.send((label.clone(), data.clone()))
            .expect("the watchdog runs");
        if catch_unwind(AssertUnwindSafe(|| run(data))).is_err() {
            let path = keep(name, label, data);
            panic!(
                "fuzz target {name} panicked on {} (`cargo fuzz run {name} {}`)",
                label,
                path.display()
            );
        }
    }
    drop(beat);
    watchdog.join().expect("the watchdog ends");
    eprintln!(
        "{name}: {} inputs ({} seeds), no panic",
        inputs.len(),
        seeds.len()
    );
}

macro_rules! replay_each {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { replay(stringify!($name)); } )*
        /// Every target this file replays, in `TARGETS` order.
        const REPLAYED: &[&str] = &[$(stringify!($name)),*];
    };
}

replay_each!(
    control_ctl_request,
    control_p4ce_wire,
    control_p4runtime_request,
    control_stf,
    control_tables_file,
    dataplane_pcap,
    dataplane_portspec,
    hash_input,
    hosts_acuerdo_ring,
    hosts_leo_app,
    hosts_leo_header,
    hosts_leo_message,
    hosts_mu_join,
    hosts_mu_slot,
    hosts_onepipe_baseline,
    hosts_onepipe_packet,
    hosts_p4ce_late,
    l2l3_packet,
    labs_acuerdo_log,
    labs_leo_wire,
    labs_mcrdma,
    labs_topology,
    labs_zk_jute,
    match_table,
    p4_compile,
    p4_parse,
    pipeline_switch,
    pre_config,
    rdma_decode,
    rdma_endpoint,
    rdma_perf_hello,
    resources_place,
    swx_spec,
);

/// One list of targets: `TARGETS`, the replays above, cargo-fuzz's binaries (a file each in
/// fuzz/fuzz_targets/ calling the target, a `[[bin]]` each in fuzz/Cargo.toml) and the seeds.
#[test]
fn every_target_is_replayed_and_has_a_cargo_fuzz_binary() {
    let targets: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        targets, REPLAYED,
        "tests/replay.rs replays every target of TARGETS"
    );
    let dir = fuzz_dir();
    let listed = |sub: &str| {
        let mut v: Vec<String> = std::fs::read_dir(dir.join(sub))
            .expect("the fuzz folder")
            .map(|e| e.expect("an entry").path())
            .map(|p| {
                p.file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    };
    let mut sorted = targets.clone();
    sorted.sort_unstable();
    assert_eq!(
        listed("fuzz_targets"),
        sorted,
        "a cargo-fuzz binary per target"
    );
    assert_eq!(listed("seeds"), sorted, "seeds per target");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for name in targets {
        let bin = std::fs::read_to_string(dir.join(format!("fuzz_targets/{name}.rs")))
            .expect("the binary");
        assert!(
            bin.contains(&format!("fuzz_targets::{name}::run(data)")),
            "{name}.rs calls its target"
        );
        let entry = format!("name = \"{name}\"\npath = \"fuzz_targets/{name}.rs\"");
        assert!(
            manifest.contains(&entry),
            "fuzz/Cargo.toml has a [[bin]] for {name}"
        );
    }
}
