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
            eprintln!("error: {}", chain_text(&err));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes joined by ": ", each cause once: a library error whose message
/// already ends with its source's text (`#[error("...: {0}")]` over a `#[from]` source) does
/// not repeat it.
fn chain_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let c = cause.to_string();
        if text.is_empty() {
            text = c;
        } else if !text.ends_with(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
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

#[cfg(test)]
mod tests {
    use std::fmt;

    /// An error whose message shows its source too, as `#[error("outer: {0}")]` over a
    /// `#[from]` source does.
    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "outer: {}", self.0)
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_the_message_already_shows_is_not_repeated() {
        let inner = std::io::Error::other("inner 7");
        let e = anyhow::Error::new(Outer(inner)).context("run");
        assert_eq!(super::chain_text(&e), "run: outer: inner 7");
        let plain = anyhow::anyhow!("plain").context("ctx");
        assert_eq!(super::chain_text(&plain), "ctx: plain");
    }
}
