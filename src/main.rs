//! `pisa`: the command-line front of the software Tofino.
//!
//! Each subcommand lives in its own module under `cmd/`; this file only parses the command line,
//! sets up logging and maps errors to exit codes (1 for a failed check/test, 2 for bad usage or
//! input that could not be processed).

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = cmd::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PISA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Rust ignores SIGPIPE, so `pisa check ... | head` would panic on the closed pipe. Like other
/// command-line tools, die quietly from the signal instead.
fn restore_sigpipe() {
    // SAFETY: setting the disposition of SIGPIPE to its default at the start of `main`, before
    // any thread exists, races with nothing; SIG_DFL is a valid handler value.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
