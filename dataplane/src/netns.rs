//! Network-namespace and command helpers for labs and tests: run a closure inside a named
//! network namespace ([`in_netns`]), run `ip`/`ethtool` with full error reporting
//! ([`run_cmd`]), and check for root ([`is_root`]).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::Command;

/// A command that could not run or failed.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// The program could not be started (not installed?).
    #[error("cannot run `{cmd}`: {source} (is it installed? {hint})")]
    Spawn {
        /// The command line.
        cmd: String,
        /// Package hint.
        hint: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The program ran and failed.
    #[error("`{cmd}` failed ({status}): {stderr}")]
    Failed {
        /// The command line.
        cmd: String,
        /// Exit status as text.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// Entering a network namespace failed.
    #[error("cannot enter network namespace {ns:?}: {source}")]
    Setns {
        /// The namespace.
        ns: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn package_hint(program: &str) -> &'static str {
    match program {
        "ip" => "apt-get install iproute2",
        "ethtool" => "apt-get install ethtool",
        _ => "check PATH",
    }
}

/// Runs `program args...`, returning its stdout; a non-zero exit is an error carrying the
/// command line and stderr.
pub fn run_cmd(program: &str, args: &[&str]) -> Result<String, CmdError> {
    let cmd = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|source| CmdError::Spawn {
            cmd: cmd.clone(),
            hint: package_hint(program),
            source,
        })?;
    if !out.status.success() {
        return Err(CmdError::Failed {
            cmd,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `ip args...`.
pub fn ip(args: &[&str]) -> Result<String, CmdError> {
    run_cmd("ip", args)
}

/// Whether the process runs as root (labs and AF_PACKET tests need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Names of the existing named network namespaces (`ip netns list`).
pub fn list_netns() -> Result<Vec<String>, CmdError> {
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// Whether a network interface of that name exists in the root namespace.
pub fn link_exists(ifname: &str) -> bool {
    ip(&["link", "show", "dev", ifname]).is_ok()
}

/// Runs `f` on a fresh thread that has entered the named network namespace
/// (`/run/netns/NAME`), and returns its result. Sockets created inside `f` stay in that
/// namespace and can be used from any thread afterwards.
pub fn in_netns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> Result<T, CmdError> {
    let path = format!("/run/netns/{ns}");
    let file = File::open(&path).map_err(|source| CmdError::Setns {
        ns: ns.to_string(),
        source,
    })?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: `file` is an open descriptor of a network namespace; setns only changes
            // this (new, scoped) thread's namespace.
            let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            if rc != 0 {
                return Err(CmdError::Setns {
                    ns: ns.to_string(),
                    source: std::io::Error::last_os_error(),
                });
            }
            Ok(f())
        })
        .join()
        .unwrap_or_else(|_| {
            Err(CmdError::Setns {
                ns: ns.to_string(),
                source: std::io::Error::other("the closure panicked"),
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_command_reports_stderr() {
        let e = run_cmd("sh", &["-c", "echo oops >&2; exit 3"]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("oops") && msg.contains("sh -c"), "{msg}");
        let e = run_cmd("definitely-not-a-program-pisa", &[]).unwrap_err();
        assert!(matches!(e, CmdError::Spawn { .. }));
    }

    #[test]
    fn missing_namespace_is_an_error() {
        let r = in_netns("pisa-no-such-ns-for-test", || 1);
        assert!(matches!(r, Err(CmdError::Setns { .. })));
    }
}
