//! `deploy/labs/p4ce.yaml` is a valid lab file and matches the in-memory lab's addressing.

use std::path::Path;

#[test]
fn p4ce_lab_file_parses_with_the_lab_addressing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/p4ce.yaml");
    let lab = dataplane::lab::Lab::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let text = format!("{lab:?}");
    for i in 1..=5 {
        assert!(text.contains(&format!("10.0.0.{i}")), "host {i} missing");
    }
    assert!(text.contains("10.0.0.100"), "the switch's P4CE IP");
}
