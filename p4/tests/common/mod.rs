//! Helpers shared by the integration tests that compile programs of a `tests/` folder.

use std::path::Path;

use p4::compile::{compile_file, CompileFailure, CompileOptions, Compiled};
use pipeline::ir::Target;

/// Compiles `tests/<dir>/<name>` for `target` with each of `defines` set to 1.
pub fn compile_test_program(
    dir: &str,
    name: &str,
    target: Target,
    defines: &[&str],
) -> Result<Compiled, CompileFailure> {
    let opts = CompileOptions {
        target,
        defines: defines
            .iter()
            .map(|n| (n.to_string(), "1".to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir)
        .join(name);
    compile_file(&path, &opts)
}

/// One pipe whose ports 0–7, where these tests send and read packets, are front-panel ports,
/// as a harness adds the ports it uses: on Tofino 2 they are recirculation ports otherwise
/// (`pipeline::devport::recirculates_by_default`).
#[allow(dead_code)] // not every test binary that shares this module builds switches
pub fn harness_config() -> pipeline::switch::SwitchConfig {
    (0..8).fold(pipeline::switch::SwitchConfig::new(1), |c, p| {
        c.with_front_panel(p)
    })
}
