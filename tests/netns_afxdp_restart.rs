//! A crashed switch leaves nothing in the way of the next one: `pisa run` on AF_XDP ports is
//! killed with SIGKILL (no destructor runs), and the interfaces carry no XDP program
//! afterwards (the program is attached through a BPF link, which the kernel drops with the
//! process), the next `pisa run` on the same interfaces and the same control-socket path
//! starts and forwards, and a SIGTERM stop leaves no program either.
//!
//! Built with the `afxdp` feature (`cargo test -p pisa --features afxdp --test
//! netns_afxdp_restart`); needs root, so it is `#[ignore]`d: run it as root with
//! `--include-ignored` (CI does); run without root it fails, saying why.
#![cfg(feature = "afxdp")]

mod common;

use std::process::Command;

use common::{lab_down_leaves_nothing, ping, require_ping, require_root, spawn_pisa, start_with};

/// Whether `ifname` has an XDP program attached (`ip link show` prints `prog/xdp`).
fn has_xdp(ifname: &str) -> bool {
    let out = Command::new("ip")
        .args(["link", "show", "dev", ifname])
        .output()
        .expect("ip link show");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ip link show {ifname}: {text}");
    text.contains("prog/xdp")
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_XDP on them; and ping (apt-get install iputils-ping)"]
fn a_killed_switch_leaves_no_xdp_program_and_the_next_one_starts() {
    let test = "a_killed_switch_leaves_no_xdp_program_and_the_next_one_starts";
    require_root();
    require_ping();
    let spec = |_: u16, ifname: &str| format!("afxdp:{ifname}");
    let (lab, mut pisa) = start_with("xdprst", "xdrs", spec, &[]);
    let ifs: Vec<String> = (0..4).map(|p| format!("{}{p}", lab.prefix)).collect();
    assert!(ping(&lab, "h1", "10.0.1.2", 2), "{test}: forwarding first");
    assert!(
        ifs.iter().all(|i| has_xdp(i)),
        "{test}: every switch port has pisa's XDP program while it runs"
    );

    // SIGKILL: no Drop, no detach code runs.
    let mut child = pisa.child.take().expect("pisa running");
    child.kill().expect("SIGKILL pisa");
    let _ = child.wait();
    // The kernel releases the BPF link with the last file descriptor; give it a moment.
    let t0 = std::time::Instant::now();
    while ifs.iter().any(|i| has_xdp(i)) && t0.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left: Vec<&String> = ifs.iter().filter(|i| has_xdp(i)).collect();
    assert!(
        left.is_empty(),
        "{test}: XDP programs left after SIGKILL on {left:?}"
    );
    drop(pisa);

    // The next start on the same interfaces (and the same control-socket path) works.
    let mut pisa = spawn_pisa(&lab, [0, 1, 2, 3], None, spec, &[]);
    assert!(
        ping(&lab, "h1", "10.0.2.3", 3),
        "{test}: forwarding after restart"
    );
    let (ok, _out, err) = pisa.terminate();
    assert!(ok, "{test}: the second switch stops cleanly: {err}");
    let left: Vec<&String> = ifs.iter().filter(|i| has_xdp(i)).collect();
    assert!(
        left.is_empty(),
        "{test}: XDP programs left after SIGTERM on {left:?}"
    );
    lab_down_leaves_nothing(lab);
}
