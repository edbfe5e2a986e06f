//! `cargo run -p pisa-p4 --release --example p4compile -- FILE.p4`: compiles one P4 file with
//! the frontend alone (no switch), prints the diagnostics and how long each half took. For
//! measuring the frontend on large or adversarial inputs without building the whole `pisa`.

use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: p4compile FILE.p4");
        std::process::exit(2);
    };
    let t = Instant::now();
    let r = p4::compile::compile_file(std::path::Path::new(&path), &Default::default());
    let took = t.elapsed();
    let ok = match &r {
        Ok(c) => {
            eprint!("{}", c.warnings.render(&c.sources));
            true
        }
        Err(f) => {
            eprint!("{}", f.render());
            false
        }
    };
    // Dropping the program is part of the cost too.
    drop(r);
    eprintln!(
        "{}: {} in {:.3} s (with drop: {:.3} s)",
        path,
        if ok { "compiled" } else { "failed" },
        took.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    std::process::exit(if ok { 0 } else { 1 });
}
