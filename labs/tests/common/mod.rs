//! Helpers the P4CE lab tests share: p4ce.p4 compiled once per test binary, test values, a
//! counter read over every pipe, and the check that replicas hold what the leader appended.
#![allow(dead_code)] // each test binary uses some of these

use std::path::Path;
use std::sync::{Arc, OnceLock};

use labs::p4ce::{compile_p4ce, Lab};
use pipeline::api::PipeSel;
use pipeline::ir::Program;

/// p4ce.p4, compiled once.
pub fn program() -> Arc<Program> {
    static P: OnceLock<Arc<Program>> = OnceLock::new();
    P.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/p4ce.p4");
        compile_p4ce(&path).unwrap_or_else(|e| panic!("{e}"))
    })
    .clone()
}

/// `n` values of 1..=3000 bytes, different for each `seed`.
pub fn values(n: usize, seed: u8) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let len = 1 + (i * 37 + seed as usize) % 3000;
            (0..len).map(|j| (i + j) as u8 ^ seed).collect()
        })
        .collect()
}

/// Packets of counter `name` cell `index`, summed over pipes.
pub fn counter(lab: &Lab, name: &str, index: u32) -> u64 {
    lab.switch()
        .counter_read(PipeSel::All, name, index)
        .unwrap()
        .iter()
        .map(|c| c.packets)
        .sum()
}

/// Every host in `hosts` applied at least `upto` entries, each the one the leader appended.
pub fn assert_logs_identical(lab: &mut Lab, hosts: &[usize], upto: usize) {
    let appended = lab.appended().to_vec();
    for &h in hosts {
        let applied = lab.applied(h);
        assert!(
            applied.len() >= upto,
            "replica {h} applied {} of {upto}",
            applied.len()
        );
        for (i, v) in applied.iter().enumerate() {
            assert_eq!(v, &appended[i], "replica {h} entry {i} differs");
        }
    }
}
