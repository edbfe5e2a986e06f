//! Benchmark for the RDMA note: RDMA WRITE goodput and message rate of the pisa endpoint
//! for 64 B, 1 KiB, 4 KiB and 64 KiB messages over an in-memory link and over a veth pair
//! between two network namespaces (AF_PACKET, and AF_XDP with the `afxdp` feature), with,
//! in the same run, a plain kernel UDP socket transfer between the same namespaces as a
//! rough ceiling, and the ratios.
//!
//! The UDP transfer sends datagrams of the payload each RoCE packet carries (the message
//! size, cut to the 1024-byte path MTU), so both move the same bytes in the same number of
//! packets. Nothing is asserted. `cargo bench -p pisa-rdma --bench host_write [--features
//! afxdp]` (AF_XDP copy mode on the veth needs the feature, i.e. clang); the veth
//! part needs root and is skipped (with a message) without it. `HOST_BENCH_SECS` sets the
//! time per measurement (default 1).

use std::net::{IpAddr, Ipv4Addr, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dataplane::netns::{in_netns, ip, is_root};
use dataplane::{AfPacketPort, Port, WallClock};
use rdma::host::perf::{run_client, run_loopback, run_server, PerfConfig, PerfTest};
use rdma::host::Host;
use rdma::verbs::{Endpoint, EndpointConfig};

const SIZES: [usize; 4] = [64, 1024, 4096, 65536];
const PATH_MTU: usize = 1024;

struct Figure {
    gbps: f64,
    mpps: f64,
}

fn secs() -> Duration {
    let s = std::env::var("HOST_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| *v > 0.0 && *v < 600.0)
        .unwrap_or(1.0);
    Duration::from_secs_f64(s)
}

fn write_cfg(size: usize) -> PerfConfig {
    let mut c = PerfConfig::new(PerfTest::WriteBw);
    c.size = size;
    c.duration = Some(secs());
    c.tx_depth = 128;
    c
}

fn mem_link(size: usize) -> Option<Figure> {
    match run_loopback(&write_cfg(size), |_| {}) {
        Ok((r, _)) => Some(Figure {
            gbps: r.bw_avg_gbps,
            mpps: r.msg_rate_mpps,
        }),
        Err(e) => {
            eprintln!("mem link, {size} B: {e}");
            None
        }
    }
}

/// Two namespaces joined by a veth; removed on drop.
struct Netns {
    ns: [String; 2],
    ifs: [String; 2],
}

impl Netns {
    fn new() -> Option<Netns> {
        let pid = std::process::id() % 100_000;
        let n = Netns {
            ns: [format!("pisa-hb{pid}-a"), format!("pisa-hb{pid}-b")],
            ifs: [format!("hb{pid}a"), format!("hb{pid}b")],
        };
        let setup = || -> Result<(), String> {
            for ns in &n.ns {
                ip(&["netns", "add", ns]).map_err(|e| e.to_string())?;
            }
            ip(&[
                "link", "add", &n.ifs[0], "netns", &n.ns[0], "type", "veth", "peer", "name",
                &n.ifs[1], "netns", &n.ns[1],
            ])
            .map_err(|e| e.to_string())?;
            for i in 0..2 {
                // Kernel addresses (10.78/16) for the UDP ceiling only; the RDMA endpoints
                // own 10.77.0.x and answer ARP for it themselves.
                let sh = format!(
                    "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && ip link set {f} up && \
                     ip addr add 10.78.0.{a}/24 dev {f} && ip link set lo up && \
                     ethtool -K {f} gro off gso off tso off >/dev/null 2>&1; true",
                    f = n.ifs[i],
                    a = i + 1
                );
                let ok = Command::new("ip")
                    .args(["netns", "exec", &n.ns[i], "sh", "-c", &sh])
                    .status()
                    .map_err(|e| e.to_string())?
                    .success();
                if !ok {
                    return Err(format!("setting up {}", n.ifs[i]));
                }
            }
            Ok(())
        };
        match setup() {
            Ok(()) => Some(n),
            Err(e) => {
                eprintln!("veth: cannot build namespaces: {e}");
                None
            }
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for ns in &self.ns {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

type Opener = fn(&str) -> Result<Box<dyn Port>, dataplane::PortError>;

fn afpacket(ifname: &str) -> Result<Box<dyn Port>, dataplane::PortError> {
    Ok(Box::new(AfPacketPort::open(ifname)?))
}

#[cfg(feature = "afxdp")]
fn afxdp(ifname: &str) -> Result<Box<dyn Port>, dataplane::PortError> {
    Ok(Box::new(dataplane::AfXdpPort::open(ifname, 0, false)?))
}

fn veth_rdma(n: &Netns, size: usize, opener: Opener) -> Option<Figure> {
    let open = |i: usize| {
        in_netns(&n.ns[i], || opener(&n.ifs[i]))
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
    };
    let (pa, pb) = match (open(0), open(1)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("veth: {e}");
            return None;
        }
    };
    let ip_of = |i: u8| Ipv4Addr::new(10, 77, 0, i);
    let mut client = Host::new(
        Endpoint::new(EndpointConfig::new([2, 0x77, 0, 0, 0, 1], ip_of(1))),
        pa,
    );
    let mut server = Host::new(
        Endpoint::new(EndpointConfig::new([2, 0x77, 0, 0, 0, 2], ip_of(2))),
        pb,
    );
    let cfg = write_cfg(size);
    let scfg = cfg.clone();
    let clock = WallClock::new();
    let sclock = clock.clone();
    let t = std::thread::spawn(move || {
        let r = run_server(&mut server, &sclock, &scfg, Some(Duration::from_secs(10)));
        let until = dataplane::Clock::now(&sclock) + dataplane::Nanos::from_millis(20);
        let _ = server.run_until(&sclock, until, |_| false);
        r
    });
    let r = run_client(&mut client, &clock, IpAddr::V4(ip_of(2)), &cfg);
    let _ = t.join();
    match r {
        Ok(r) => Some(Figure {
            gbps: r.bw_avg_gbps,
            mpps: r.msg_rate_mpps,
        }),
        Err(e) => {
            eprintln!("veth, {size} B: {e}");
            None
        }
    }
}

fn veth_udp(n: &Netns, size: usize) -> Option<Figure> {
    let dgram = size.min(PATH_MTU);
    let rx = in_netns(&n.ns[1], || UdpSocket::bind("10.78.0.2:9999"))
        .ok()?
        .ok()?;
    let tx = in_netns(&n.ns[0], || UdpSocket::bind("10.78.0.1:0"))
        .ok()?
        .ok()?;
    tx.connect("10.78.0.2:9999").ok()?;
    rx.set_read_timeout(Some(Duration::from_millis(100))).ok()?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop_tx = stop.clone();
    let sender = std::thread::spawn(move || {
        let buf = vec![0x5Au8; dgram];
        while !stop_tx.load(Ordering::Relaxed) {
            let _ = tx.send(&buf);
        }
    });
    // Warm up, then count what arrives during the measurement.
    let mut buf = vec![0u8; 65536];
    let warm = Instant::now() + Duration::from_millis(100);
    while Instant::now() < warm {
        let _ = rx.recv(&mut buf);
    }
    let start = Instant::now();
    let (mut bytes, mut pkts) = (0u64, 0u64);
    while start.elapsed() < secs() {
        if let Ok(k) = rx.recv(&mut buf) {
            bytes += k as u64;
            pkts += 1;
        }
    }
    let el = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = sender.join();
    // Messages of `size` bytes need size/dgram datagrams.
    let per_msg = size.div_ceil(dgram) as f64;
    Some(Figure {
        gbps: bytes as f64 * 8.0 / el / 1e9,
        mpps: pkts as f64 / per_msg / el / 1e6,
    })
}

fn cell(f: &Option<Figure>) -> String {
    match f {
        Some(f) => format!("{:>8.3} Gb/s {:>8.4} Mmsg/s", f.gbps, f.mpps),
        None => format!("{:>29}", "n/a"),
    }
}

fn ratio(a: &Option<Figure>, b: &Option<Figure>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b.gbps > 0.0 => format!("{:>6.2}", a.gbps / b.gbps),
        _ => format!("{:>6}", "n/a"),
    }
}

fn main() {
    // `cargo test --benches` runs bench binaries with no arguments too; keep that quick.
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    println!(
        "RDMA WRITE goodput, pisa endpoint (path MTU {PATH_MTU}, tx depth 128, {:?} per cell)",
        secs()
    );
    let netns = if is_root() {
        Netns::new()
    } else {
        eprintln!("veth: skipped: needs root for network namespaces");
        None
    };
    println!(
        "{:>7} | {:^29} | {:^29} | {:^29} | {:^29} | {:>6} | {:>6} | {:>6}",
        "size",
        "mem link",
        "veth AF_PACKET",
        "veth AF_XDP",
        "veth kernel UDP",
        "pkt/U",
        "xdp/U",
        "mem/U"
    );
    for size in SIZES {
        let mem = mem_link(size);
        let (veth, xdp, udp) = match &netns {
            Some(n) => {
                #[cfg(feature = "afxdp")]
                let xdp = veth_rdma(n, size, afxdp);
                #[cfg(not(feature = "afxdp"))]
                let xdp = None;
                (veth_rdma(n, size, afpacket), xdp, veth_udp(n, size))
            }
            None => (None, None, None),
        };
        println!(
            "{:>7} | {} | {} | {} | {} | {} | {} | {}",
            size,
            cell(&mem),
            cell(&veth),
            cell(&xdp),
            cell(&udp),
            ratio(&veth, &udp),
            ratio(&xdp, &udp),
            ratio(&mem, &udp)
        );
    }
}
