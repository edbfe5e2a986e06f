//! Helpers shared by the end-to-end tests in network namespaces (`netns_switch`,
//! `netns_backends`, `netns_afxdp_restart`, `rdma_netns`, `p4ce_netns`): the root check
//! ([`require_root`]), the bundled four-host lab brought up under a unique name, and `pisa run`
//! started on it with any port specs (and any device ports, e.g. across two pipes with
//! [`two_pipe_tables`]), each removed by a Drop guard (also when an assertion fails).
//!
//! The tests that need root are `#[ignore = "needs root: ..."]`; CI runs them as root with
//! `--include-ignored`. Run where they cannot (not root, a tool missing) they fail, saying why.
//!
//! Each test binary uses only some of these, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod pcap;

use std::io::Read;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dataplane::lab::{self, Lab};
use dataplane::netns::{in_netns, is_root, list_netns};
use serde_json::Value as Json;

pub const PISA: &str = env!("CARGO_BIN_EXE_pisa");
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Fails the test unless it can run here: root (network namespaces, veth pairs, AF_PACKET)
/// and the `ip` command. The tests calling it are `#[ignore]`d, so this runs only when asked
/// for (`--include-ignored`), and then a test that cannot run must not pass.
pub fn require_root() {
    if !is_root() {
        panic!(
            "this test needs root (network namespaces, veth pairs, AF_PACKET); \
             run it as root or leave it ignored"
        );
    }
    if Command::new("ip").arg("-V").output().is_err() {
        panic!("this test needs the `ip` command (apt-get install iproute2)");
    }
}

/// Removes the lab on drop.
pub struct LabGuard {
    pub name: String,
    pub prefix: String,
    pub dir: PathBuf,
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = lab::lab_down(&self.name);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Stops pisa on drop (SIGTERM, then SIGKILL after 10 s).
pub struct Pisa {
    pub child: Option<Child>,
    pub ctl: PathBuf,
}

impl Pisa {
    pub fn ctl(&self, args: &[&str]) -> Json {
        let out = Command::new(PISA)
            .arg("ctl")
            .arg("--json")
            .arg("--socket")
            .arg(&self.ctl)
            .args(args)
            .output()
            .expect("run pisa ctl");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "pisa ctl {args:?}: {e}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// Sends SIGTERM and waits; returns (exit success, stdout, stderr).
    pub fn terminate(&mut self) -> (bool, String, String) {
        let Some(mut child) = self.child.take() else {
            return (false, String::new(), String::new());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let t0 = Instant::now();
        let status = loop {
            if let Ok(Some(s)) = child.try_wait() {
                break Some(s);
            }
            if t0.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        let mut err = String::new();
        if let Some(mut o) = child.stdout.take() {
            let _ = o.read_to_string(&mut out);
        }
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        (status.is_some_and(|s| s.success()), out, err)
    }
}

impl Drop for Pisa {
    fn drop(&mut self) {
        self.terminate();
        let _ = std::fs::remove_file(&self.ctl);
    }
}

/// Brings up the bundled lab as `name` (switch-side interfaces `<prefix>0..3`) and starts
/// `pisa run` with l2l3.p4 on it; `port(p, ifname)` gives the port spec of device port `p`
/// (e.g. `afpacket:<ifname>`).
pub fn start_with(
    name: &str,
    prefix: &str,
    port: impl Fn(u16, &str) -> String,
    extra: &[&str],
) -> (LabGuard, Pisa) {
    start_on(name, prefix, [0, 1, 2, 3], None, port, extra)
}

/// [`start_with`] with the lab's four switch-side interfaces on the given device ports and,
/// when given, another table file (e.g. [`two_pipe_tables`] for devports 0, 1, 128, 129).
pub fn start_on(
    name: &str,
    prefix: &str,
    devports: [u16; 4],
    tables: Option<&Path>,
    port: impl Fn(u16, &str) -> String,
    extra: &[&str],
) -> (LabGuard, Pisa) {
    let text = std::fs::read_to_string(Path::new(ROOT).join("deploy/labs/l2l3-4hosts.yaml"))
        .expect("bundled lab");
    let text = text
        .replace("name: l2l3-4hosts", &format!("name: {name}"))
        .replace("ifprefix: l2l3p", &format!("ifprefix: {prefix}"));
    let l = Lab::from_yaml(&text).expect("lab parses");
    let dir = std::env::temp_dir().join(format!("pisa-test-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // A lab left over from a crashed run of this same test goes first.
    let _ = lab::lab_down(name);
    lab::lab_up(&l).expect("lab up");
    let guard = LabGuard {
        name: name.to_string(),
        prefix: prefix.to_string(),
        dir: dir.clone(),
    };
    let pisa = spawn_pisa(&guard, devports, tables, port, extra);
    (guard, pisa)
}

/// Starts `pisa run` with l2l3.p4 on a lab that is up (see [`start_on`] for the arguments) and
/// waits until its control socket answers.
pub fn spawn_pisa(
    lab: &LabGuard,
    devports: [u16; 4],
    tables: Option<&Path>,
    port: impl Fn(u16, &str) -> String,
    extra: &[&str],
) -> Pisa {
    let ctl = lab.dir.join("ctl.sock");
    let mut cmd = Command::new(PISA);
    cmd.arg("run")
        .arg("--program")
        .arg(Path::new(ROOT).join("p4/programs/l2l3.p4"))
        .arg("--tables")
        .arg(tables.map_or_else(
            || Path::new(ROOT).join("p4/programs/l2l3.tables.yaml"),
            Path::to_path_buf,
        ))
        .arg("--ctl")
        .arg(&ctl)
        .arg("--no-pin");
    for (i, d) in devports.iter().enumerate() {
        cmd.arg("--port")
            .arg(format!("{d}={}", port(*d, &format!("{}{i}", lab.prefix))));
    }
    cmd.args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn pisa");
    let mut pisa = Pisa {
        child: Some(child),
        ctl: ctl.clone(),
    };
    // Ready when the control socket answers.
    let t0 = Instant::now();
    loop {
        if ctl.exists() {
            let out = Command::new(PISA)
                .args(["ctl", "--socket"])
                .arg(&ctl)
                .arg("stats")
                .output()
                .expect("pisa ctl");
            if out.status.success() {
                break;
            }
        }
        let exited = pisa
            .child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))));
        if exited {
            let (_, out, err) = pisa.terminate();
            panic!("pisa exited before its control socket answered: {out}{err}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "pisa did not come up within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    pisa
}

/// Sends `n` numbered 1000-byte datagrams from h1 to h3 (routed) while h3 receives them;
/// returns how many distinct ones arrived. `port`: h3's UDP port (distinct per test).
pub fn udp_h1_to_h3(lab: &LabGuard, n: u32, port: u16) -> usize {
    let rx = in_netns(&ns(lab, "h3"), || UdpSocket::bind(("10.0.2.3", port)))
        .expect("enter h3")
        .expect("bind on h3");
    rx.set_read_timeout(Some(Duration::from_millis(1000)))
        .expect("read timeout");
    let tx = in_netns(&ns(lab, "h1"), || UdpSocket::bind("10.0.1.1:0"))
        .expect("enter h1")
        .expect("bind on h1");
    // Receive while sending, so the socket buffer on h3 never overflows.
    let receiver = std::thread::spawn(move || {
        let mut seen = vec![false; n as usize];
        let mut buf = [0u8; 2000];
        while let Ok((len, _)) = rx.recv_from(&mut buf) {
            assert_eq!(len, 1000, "datagram length");
            let i = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
            assert!(i < seen.len(), "sequence number {i} out of range");
            seen[i] = true;
        }
        seen.iter().filter(|s| **s).count()
    });
    for i in 0..n {
        let mut msg = [0u8; 1000];
        msg[..4].copy_from_slice(&i.to_be_bytes());
        tx.send_to(&msg, ("10.0.2.3", port)).expect("send");
        if i % 16 == 15 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    receiver.join().expect("receiver thread")
}

/// Writes `p4/programs/l2l3.tables.yaml` with hosts h3 and h4 moved to pipe 1 (device ports
/// 128 and 129 instead of 2 and 3) to `path`, for `pisa run --pipes 2`.
pub fn two_pipe_tables(path: &Path) {
    let text = std::fs::read_to_string(Path::new(ROOT).join("p4/programs/l2l3.tables.yaml"))
        .expect("bundled tables");
    let text = text
        .replace("port: 2 }", "port: 128 }")
        .replace("port: 3 }", "port: 129 }")
        .replace("ports: [0, 1, 2, 3]", "ports: [0, 1, 128, 129]")
        .replace("{ xid: 2, ports: [2] }", "{ xid: 128, ports: [128] }")
        .replace("{ xid: 3, ports: [3] }", "{ xid: 129, ports: [129] }");
    assert!(
        text.contains("port: 129 }") && text.contains("xid: 129"),
        "the bundled table file changed shape; update two_pipe_tables"
    );
    std::fs::write(path, text).expect("write the two-pipe table file");
}

/// The namespace of lab host `host`.
pub fn ns(lab: &LabGuard, host: &str) -> String {
    format!("pisa-{}-{host}", lab.name)
}

/// Whether `count` pings from `host` to `dst` get at least one answer.
pub fn ping(lab: &LabGuard, host: &str, dst: &str, count: u32) -> bool {
    Command::new("ip")
        .args(["netns", "exec", &ns(lab, host), "ping", "-c"])
        .arg(count.to_string())
        .args(["-i", "0.2", "-W", "2", dst])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Fails the test unless `ping` is installed.
pub fn require_ping() {
    if Command::new("ping").arg("-V").output().is_err() {
        panic!("this test needs `ping` (apt-get install iputils-ping)");
    }
}

/// Drops the lab and checks that it left no namespace and no switch-side link behind.
pub fn lab_down_leaves_nothing(lab: LabGuard) {
    let name = lab.name.clone();
    let prefix = lab.prefix.clone();
    drop(lab);
    let left: Vec<String> = list_netns()
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with(&format!("pisa-{name}-")))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    for p in 0..4 {
        assert!(
            !dataplane::netns::link_exists(&format!("{prefix}{p}")),
            "link {prefix}{p} left"
        );
    }
}

/// A local TCP address nothing listens on now (for a server the test starts).
pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local address").to_string()
}

/// Waits until something accepts TCP connections on `addr` (e.g. a P4Runtime server), failing
/// when pisa exits first or after 60 s.
pub fn wait_listening(pisa: &mut Pisa, addr: &str) {
    let t0 = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        let exited = pisa
            .child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))));
        if exited {
            let (_, out, err) = pisa.terminate();
            panic!("pisa exited before listening on {addr}: {out}{err}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "nothing listens on {addr} after 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Writes `program`'s P4Info (text format) to `out` with `pisa p4info`.
pub fn write_p4info(program: &Path, out: &Path) {
    let st = Command::new(PISA)
        .arg("p4info")
        .arg(program)
        .arg("-o")
        .arg(out)
        .status()
        .expect("run pisa p4info");
    assert!(st.success(), "pisa p4info {}", program.display());
}

/// Starts `pisa run` with `program` on `ports` (`DEVPORT=SPEC`) serving P4Runtime on `addr`,
/// and waits until the server listens. `dir` is the test's scratch directory.
pub fn run_p4runtime(program: &Path, ports: &[String], addr: &str, dir: &Path) -> Pisa {
    let mut cmd = Command::new(PISA);
    cmd.args(["run", "--program"]).arg(program);
    for p in ports {
        cmd.arg("--port").arg(p);
    }
    cmd.args(["--no-pin", "--p4runtime", addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut pisa = Pisa {
        child: Some(cmd.spawn().expect("spawn pisa")),
        ctl: dir.join("unused.sock"),
    };
    wait_listening(&mut pisa, addr);
    pisa
}
