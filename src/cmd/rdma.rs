//! `pisa rdma write-bw | write-lat | read-bw | read-lat | send-bw | send-lat | decode`:
//! perftest-like benchmarks between two pisa RoCEv2 endpoints on real ports (the engine is
//! `rdma::host::perf`), and a RoCEv2 pcap decoder that validates ICRCs.
//!
//! Usage like perftest: the server runs `pisa rdma write-bw -d afpacket:veth1 --ip
//! 10.0.0.2/24`; the client the same with its own device and address plus the server's
//! address last. `--loopback` runs both sides in this process over an in-memory link.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use dataplane::{open_port, MemHub, Port, PortSpec, WallClock};
use rdma::host::perf::{self, PerfConfig, PerfReport, PerfTest};
use rdma::host::{CapturePort, Host};
use rdma::verbs::{Endpoint, EndpointConfig};

#[derive(Subcommand, Debug)]
pub enum RdmaCommand {
    /// RDMA WRITE bandwidth (like ib_write_bw).
    WriteBw(PerfArgs),
    /// RDMA WRITE ping-pong latency (like ib_write_lat).
    WriteLat(PerfArgs),
    /// RDMA READ bandwidth (like ib_read_bw).
    ReadBw(PerfArgs),
    /// RDMA READ latency (like ib_read_lat).
    ReadLat(PerfArgs),
    /// SEND bandwidth (like ib_send_bw).
    SendBw(PerfArgs),
    /// SEND ping-pong latency (like ib_send_lat).
    SendLat(PerfArgs),
    /// One line per RoCEv2 frame of a pcap file; `--check` fails on malformed frames or bad ICRCs.
    Decode(DecodeArgs),
}

/// Table for people, JSON for scripts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum PerfFormat {
    #[default]
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct PerfArgs {
    /// The server's IPv4 address; without it this side is the server.
    pub server: Option<Ipv4Addr>,
    /// The port to run on: afpacket:IF or afxdp:IF.
    #[arg(short = 'd', long = "device", value_name = "SPEC")]
    pub device: Option<String>,
    /// This endpoint's IPv4 address (ADDR or ADDR/LEN). Do not also configure it on the
    /// kernel interface: the endpoint answers ARP for it itself.
    #[arg(long, value_name = "ADDR[/LEN]")]
    pub ip: Option<String>,
    /// This endpoint's MAC address (default: the interface's).
    #[arg(long, value_name = "MAC")]
    pub mac: Option<String>,
    /// Message size in bytes (default 65536 for bandwidth, 2 for latency tests).
    #[arg(short = 's', long = "size")]
    pub size: Option<usize>,
    /// Iterations (default 5000 for bandwidth, 1000 for latency tests).
    #[arg(short = 'n', long = "iters")]
    pub iters: Option<u64>,
    /// Requests in flight (bandwidth tests).
    #[arg(short = 't', long = "tx-depth", default_value_t = 128)]
    pub tx_depth: usize,
    /// Run for this many seconds instead of a number of iterations.
    #[arg(short = 'D', long = "duration", value_name = "SECS", value_parser = crate::cmd::seconds)]
    pub duration: Option<f64>,
    /// RDMA CM port.
    #[arg(short = 'p', long = "port", default_value_t = perf::DEFAULT_CM_PORT)]
    pub port: u16,
    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096.
    #[arg(short = 'm', long = "mtu", default_value_t = 1024)]
    pub mtu: usize,
    /// Accept frames whose ICRC does not verify (the ConnectX option).
    #[arg(long)]
    pub no_icrc_check: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PerfFormat::Table)]
    pub report: PerfFormat,
    /// Run server and client in this process over an in-memory link (no root needed).
    #[arg(long)]
    pub loopback: bool,
    /// Write the frames this side sends or receives to a pcap file: the first
    /// `--capture-frames` of them (a default bandwidth run moves about 330 MB).
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
    /// How many frames `--capture` writes at most (0: every frame). The default, 20000
    /// frames, is at most about 22 MB at the default MTU.
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub capture_frames: u64,
    /// Server: give up when no client connects within this many seconds (default: wait).
    #[arg(long, value_name = "SECS", value_parser = crate::cmd::seconds)]
    pub accept_timeout: Option<f64>,
}

#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// A pcap file of Ethernet frames.
    pub file: PathBuf,
    /// Exit with status 1 when a RoCEv2 frame is malformed or its ICRC does not verify.
    #[arg(long)]
    pub check: bool,
}

pub fn run(cmd: RdmaCommand) -> anyhow::Result<ExitCode> {
    let (test, args) = match cmd {
        RdmaCommand::Decode(a) => return decode(&a),
        RdmaCommand::WriteBw(a) => (PerfTest::WriteBw, a),
        RdmaCommand::WriteLat(a) => (PerfTest::WriteLat, a),
        RdmaCommand::ReadBw(a) => (PerfTest::ReadBw, a),
        RdmaCommand::ReadLat(a) => (PerfTest::ReadLat, a),
        RdmaCommand::SendBw(a) => (PerfTest::SendBw, a),
        RdmaCommand::SendLat(a) => (PerfTest::SendLat, a),
    };
    bench(test, &args)
}

fn perf_config(test: PerfTest, a: &PerfArgs) -> anyhow::Result<PerfConfig> {
    let mut cfg = PerfConfig::new(test);
    if let Some(s) = a.size {
        cfg.size = s;
    }
    if let Some(n) = a.iters {
        cfg.iterations = n;
    }
    cfg.tx_depth = a.tx_depth;
    cfg.cm_port = a.port;
    if let Some(d) = a.duration {
        if !(d.is_finite() && d > 0.0 && d < 1e6) {
            bail!("--duration must be a positive number of seconds, got {d}");
        }
        cfg.duration = Some(Duration::from_secs_f64(d));
    }
    cfg.validate()?;
    Ok(cfg)
}

fn tune(a: &PerfArgs) -> anyhow::Result<impl Fn(&mut EndpointConfig)> {
    let mtu = perf::parse_mtu(a.mtu)
        .with_context(|| format!("--mtu {} is not one of 256, 512, 1024, 2048, 4096", a.mtu))?;
    let icrc = !a.no_icrc_check;
    Ok(move |c: &mut EndpointConfig| {
        c.cm.path_mtu = mtu;
        c.icrc_check = icrc;
    })
}

fn bench(test: PerfTest, a: &PerfArgs) -> anyhow::Result<ExitCode> {
    let cfg = perf_config(test, a)?;
    let tune = tune(a)?;
    if a.loopback {
        if let Some(d) = &a.device {
            if !d.starts_with("mem:") {
                bail!("--loopback runs over an in-memory link; drop -d {d} (or use mem:NAME)");
            }
        }
        let (client, server) = perf::run_loopback(&cfg, tune)?;
        let dev = a.device.clone().unwrap_or_else(|| "mem:loopback".into());
        print_report(
            a,
            &dev,
            "client",
            &client,
            Some(IpAddr::V4(perf::LOOPBACK_SERVER)),
        );
        if let Some(s) = server {
            print_report(a, &dev, "server", &s, None);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dev = a
        .device
        .as_deref()
        .context("-d/--device is required (afpacket:IF or afxdp:IF), or use --loopback")?;
    let spec: PortSpec = dev.parse()?;
    let ifname = match &spec {
        PortSpec::AfPacket { ifname } | PortSpec::AfXdp { ifname, .. } => ifname.clone(),
        _ => {
            bail!("-d {dev}: an RDMA device is afpacket:IF or afxdp:IF (mem: only with --loopback)")
        }
    };
    let ip_arg = a.ip.as_deref().context("--ip ADDR[/LEN] is required")?;
    let ip: Ipv4Addr = ip_arg
        .split('/')
        .next()
        .unwrap_or(ip_arg)
        .parse()
        .with_context(|| format!("--ip {ip_arg}: not an IPv4 address"))?;
    let mac = match &a.mac {
        Some(m) => parse_mac(m).with_context(|| format!("--mac {m}"))?,
        None => interface_mac(&ifname).unwrap_or_else(|| derived_mac(ip)),
    };
    let mut ecfg = EndpointConfig::new(mac, ip);
    tune(&mut ecfg);
    let mut hub = MemHub::default();
    let mut port: Box<dyn Port> = open_port(&spec, &mut hub)?;
    let mut capture = None;
    if let Some(path) = &a.capture {
        let limit = (a.capture_frames > 0).then_some(a.capture_frames);
        let c = CapturePort::with_limit(port, path, limit)?;
        capture = Some((c.counts(), path.clone()));
        port = Box::new(c);
    }
    let mut host = Host::new(Endpoint::new(ecfg), port);
    let clock = WallClock::new();
    match a.server {
        Some(server) => {
            let r = perf::run_client(&mut host, &clock, IpAddr::V4(server), &cfg)?;
            print_report(a, dev, "client", &r, Some(IpAddr::V4(server)));
        }
        None => {
            if a.report == PerfFormat::Table {
                println!(
                    "waiting for a {test} client on {dev} ({ip}, RDMA CM port {})",
                    cfg.cm_port
                );
            }
            let timeout = a.accept_timeout.map(Duration::from_secs_f64);
            let r = perf::run_server(&mut host, &clock, &cfg, timeout)?;
            // Let the DREP go out before the port closes.
            let until = dataplane::Clock::now(&clock) + dataplane::Nanos::from_millis(20);
            let _ = host.run_until(&clock, until, |_| false);
            match r {
                Some(r) => print_report(a, dev, "server", &r, None),
                None if a.report == PerfFormat::Table => println!("client done"),
                None => println!(
                    "{}",
                    serde_json::json!({"test": test.name(), "side": "server"})
                ),
            }
        }
    }
    drop(host);
    if let Some((counts, path)) = capture {
        // On stderr, so that `--report json` stays one JSON document on stdout.
        let (written, seen) = (counts.written(), counts.seen());
        if written < seen {
            eprintln!(
                "capture: the first {written} of {seen} frames written to {} (--capture-frames N \
                 raises the bound, 0 writes every frame)",
                path.display()
            );
        } else {
            eprintln!("capture: {written} frames written to {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_mac(s: &str) -> anyhow::Result<[u8; 6]> {
    let mut out = [0u8; 6];
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        bail!("expected six ':'-separated hex bytes");
    }
    for (o, p) in out.iter_mut().zip(parts) {
        *o = u8::from_str_radix(p, 16).with_context(|| format!("{p:?} is not a hex byte"))?;
    }
    Ok(out)
}

/// The interface's MAC from sysfs (correct inside `ip netns exec`, which remounts /sys).
fn interface_mac(ifname: &str) -> Option<[u8; 6]> {
    let s = std::fs::read_to_string(format!("/sys/class/net/{ifname}/address")).ok()?;
    parse_mac(s.trim()).ok()
}

/// A locally administered MAC built from the IPv4 address.
fn derived_mac(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [0x02, 0x52, o[0], o[1], o[2], o[3]]
}

fn print_report(a: &PerfArgs, dev: &str, side: &str, r: &PerfReport, peer: Option<IpAddr>) {
    match a.report {
        PerfFormat::Json => println!("{}", report_json(dev, side, r)),
        PerfFormat::Table => print_table(a, dev, side, r, peer),
    }
}

fn report_json(dev: &str, side: &str, r: &PerfReport) -> serde_json::Value {
    let lat = r.latency.map(|l| {
        serde_json::json!({
            "min_us": l.min_ns as f64 / 1e3,
            "median_us": l.median_ns as f64 / 1e3,
            "p99_us": l.p99_ns as f64 / 1e3,
            "p999_us": l.p999_ns as f64 / 1e3,
            "max_us": l.max_ns as f64 / 1e3,
            "avg_us": l.mean_ns / 1e3,
        })
    });
    serde_json::json!({
        "test": r.test.name(),
        "side": side,
        "device": dev,
        "bytes": r.size,
        "iterations": r.iterations,
        "elapsed_s": r.elapsed_ns as f64 / 1e9,
        "bw_peak_gbps": r.bw_peak_gbps,
        "bw_avg_gbps": r.bw_avg_gbps,
        "bw_avg_mbps": r.bw_avg_mbps,
        "msg_rate_mpps": r.msg_rate_mpps,
        "latency": lat,
        "retransmissions": r.retransmissions,
        "timeouts": r.timeouts,
    })
}

const RULE: &str =
    "---------------------------------------------------------------------------------------";

fn print_table(a: &PerfArgs, dev: &str, side: &str, r: &PerfReport, peer: Option<IpAddr>) {
    println!("{RULE}");
    println!("                    {} test ({side})", r.test.name());
    println!(" Device          : {dev}");
    println!(" Transport type  : RoCEv2 (pisa userspace endpoint)");
    println!(" Connection type : RC (RDMA CM, port {})", a.port);
    if !r.test.is_latency() {
        println!(" TX depth        : {}", a.tx_depth);
    }
    println!(" Mtu             : {}[B]", a.mtu);
    println!(
        " ICRC check      : {}",
        if a.no_icrc_check { "OFF" } else { "ON" }
    );
    if let Some(p) = peer {
        println!(" remote address  : {p}");
    }
    println!("{RULE}");
    match r.latency {
        None => {
            println!(
                " {:<10} {:<12} {:>16} {:>19} {:>18} {:>14}",
                "#bytes",
                "#iterations",
                "BW peak[Gb/sec]",
                "BW average[Gb/sec]",
                "BW average[MB/sec]",
                "MsgRate[Mpps]"
            );
            println!(
                " {:<10} {:<12} {:>16.3} {:>19.3} {:>18.2} {:>14.6}",
                r.size, r.iterations, r.bw_peak_gbps, r.bw_avg_gbps, r.bw_avg_mbps, r.msg_rate_mpps
            );
        }
        Some(l) => {
            let us = |ns: u64| ns as f64 / 1e3;
            println!(
                " {:<8} {:<12} {:>12} {:>15} {:>12} {:>12} {:>12} {:>14}",
                "#bytes",
                "#iterations",
                "t_min[usec]",
                "t_median[usec]",
                "t_p99[usec]",
                "t_max[usec]",
                "t_avg[usec]",
                "MsgRate[Mpps]"
            );
            println!(
                " {:<8} {:<12} {:>12.2} {:>15.2} {:>12.2} {:>12.2} {:>12.2} {:>14.6}",
                r.size,
                r.iterations,
                us(l.min_ns),
                us(l.median_ns),
                us(l.p99_ns),
                us(l.max_ns),
                l.mean_ns / 1e3,
                r.msg_rate_mpps
            );
            if r.test != PerfTest::ReadLat {
                println!(" (half round trip, as perftest reports ping-pong latency)");
            }
        }
    }
    if r.retransmissions > 0 || r.timeouts > 0 {
        println!(
            " retransmitted packets: {}, ACK timeouts: {}",
            r.retransmissions, r.timeouts
        );
    }
    println!("{RULE}");
}

/// Counts of a decode run.
#[derive(Debug, Default, PartialEq, Eq)]
struct DecodeCounts {
    /// Every record of the file.
    frames: u64,
    /// RoCEv2 frames that decoded (good or bad ICRC).
    roce: u64,
    /// Frames not addressed to RoCEv2 (whatever else is wrong with them).
    other: u64,
    /// Frames addressed to RoCEv2 (UDP port 4791) that do not decode, or carry a bad CM MAD.
    malformed: u64,
    /// RoCEv2 frames whose ICRC does not verify.
    bad_icrc: u64,
    /// Frames cut by the capture's snap length (or shorter than an Ethernet header): not
    /// checked, since their bytes are not all there.
    truncated: u64,
}

fn decode(a: &DecodeArgs) -> anyhow::Result<ExitCode> {
    let counts = decode_file(&a.file, &mut std::io::stdout().lock())?;
    eprintln!(
        "{} frame(s): {} RoCEv2 ({} bad ICRC), {} malformed RoCEv2, {} other, {} truncated",
        counts.frames,
        counts.roce,
        counts.bad_icrc,
        counts.malformed,
        counts.other,
        counts.truncated
    );
    if a.check && (counts.malformed > 0 || counts.bad_icrc > 0) {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints one line per RoCEv2 frame and per frame that cannot be checked, numbered as
/// tshark numbers frames (every record of the file, from 1).
fn decode_file(path: &Path, out: &mut dyn std::io::Write) -> anyhow::Result<DecodeCounts> {
    let records = dataplane::pcap::read_records(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if records.linktype != 1 {
        bail!(
            "`{}`: link type {} is not Ethernet",
            path.display(),
            records.linktype
        );
    }
    let mut c = DecodeCounts::default();
    for rec in records {
        let rec = rec.map_err(|e| anyhow::anyhow!("`{}`: {e}", path.display()))?;
        c.frames += 1;
        let i = rec.number;
        if let Err(why) = rec.check() {
            if why != dataplane::DropReason::TooLong {
                c.truncated += 1;
                if rdma::decode::is_roce_udp(&rec.data) {
                    let reason = rec.skip_reason().unwrap_or_default();
                    writeln!(out, "{i:>6} RoCEv2, not checked: {reason}")?;
                }
                continue;
            }
        }
        let f = &rec.data;
        match rdma::decode::decode_frame(f) {
            Ok(d) => {
                c.roce += 1;
                let mut bad = "";
                if !d.icrc_ok {
                    c.bad_icrc += 1;
                    bad = "  <-- BAD ICRC";
                }
                if let Some(e) = &d.cm_error {
                    c.malformed += 1;
                    writeln!(out, "{i:>6} {d}  <-- MALFORMED CM MAD: {e}")?;
                } else {
                    writeln!(out, "{i:>6} {d}{bad}")?;
                }
            }
            Err(e) if rdma::decode::is_roce_udp(f) => {
                c.malformed += 1;
                writeln!(out, "{i:>6} RoCEv2 MALFORMED ({} bytes): {e}", f.len())?;
            }
            Err(_) => c.other += 1,
        }
    }
    Ok(c)
}
