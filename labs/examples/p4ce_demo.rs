//! The P4CE consensus benchmark without the `pisa` binary: both modes side by side (the
//! table `pisa demo p4ce` prints). Usage:
//! `cargo run --release -p pisa-labs --example p4ce_demo -- [DURATION_MS]`.

use std::path::Path;

use hosts::mu::Path as Mode;
use labs::p4ce::mem::bench::{self, BenchConfig};
use labs::p4ce::mem::compile_p4ce;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let ms: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/p4ce.p4");
    let program = compile_p4ce(&path)?;
    let mut reports = Vec::new();
    for replicas in [2, 4] {
        for value_size in [64, 1024, 8192, 65536] {
            for mode in [Mode::Switch, Mode::Unicast] {
                let cfg = BenchConfig {
                    mode,
                    replicas,
                    value_size,
                    outstanding: 16,
                    duration_ns: ms * 1_000_000,
                    link_rate_bps: 10_000_000_000,
                    link_delay_ns: 1_000,
                    faults: Default::default(),
                    host_links: Vec::new(),
                    late_replica: None,
                };
                reports.push(bench::run(program.clone(), &cfg)?);
            }
        }
    }
    print!("{}", bench::side_by_side(&reports));
    Ok(())
}
