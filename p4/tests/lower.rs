//! End-to-end lowering tests: the shipped programs compile to IR with the expected shape.

use std::path::Path;

use p4::compile::{lower_file, CompileOptions};
use pipeline::ir::{self, Target};

fn lower(rel: &str, target: Target) -> ir::Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let opts = CompileOptions {
        target,
        ..Default::default()
    };
    match lower_file(&path, &opts) {
        Ok(c) => c.program,
        Err(f) => panic!("{} failed:\n{}", rel, f.render()),
    }
}

#[test]
fn l2l3_lowers_for_tofino1() {
    let p = lower("programs/l2l3.p4", Target::Tofino1);
    eprintln!("{}", p4::lower::summary(&p));
    eprintln!("{:#?}", p.pipelines[0].ingress.parser);
    eprintln!("{:#?}", p.pipelines[0].ingress.control);
    assert_eq!(p.pipe_map, vec![0, 0, 0, 0]);
}
