//! Measures AF_PACKET throughput over a veth pair between two fresh network namespaces:
//! one thread sends 64-byte frames in batches, another receives, for two seconds; prints
//! sent/received packets per second and drops. Needs root. Cleans up its namespaces.
//!
//! `cargo run --release -p pisa-dataplane --example veth_pps [FRAME_LEN] [SECONDS]`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dataplane::netns::{in_netns, ip, is_root};
use dataplane::{AfPacketPort, FrameBatch, Nanos, Port};

struct Cleanup(Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !is_root() {
        eprintln!("veth_pps needs root (network namespaces and AF_PACKET)");
        std::process::exit(2);
    }
    let mut args = std::env::args().skip(1);
    let len: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(64);
    let secs: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(2);
    let len = len.clamp(60, 1514);
    let pid = std::process::id();
    let (na, nb) = (format!("pisa-pps{pid}-a"), format!("pisa-pps{pid}-b"));
    let _guard = Cleanup(vec![na.clone(), nb.clone()]);
    ip(&["netns", "add", &na])?;
    ip(&["netns", "add", &nb])?;
    ip(&[
        "-n", &na, "link", "add", "dev", "va", "type", "veth", "peer", "name", "vb", "netns", &nb,
    ])?;
    for (ns, i) in [(&na, "va"), (&nb, "vb")] {
        ip(&[
            "-n",
            ns,
            "link",
            "set",
            "dev",
            i,
            "addrgenmode",
            "none",
            "up",
        ])?;
    }
    let mut tx = in_netns(&na, || AfPacketPort::open("va"))??;
    let mut rx = in_netns(&nb, || AfPacketPort::open("vb"))??;

    let stop = Arc::new(AtomicBool::new(false));
    let stop_rx = stop.clone();
    let receiver = std::thread::spawn(move || {
        let mut b = FrameBatch::with_buffers(64, 2048);
        while !stop_rx.load(Ordering::Relaxed) {
            if rx.recv_batch(&mut b, Nanos(0)).unwrap_or(0) == 0 {
                let _ = rx.wait_readable(Duration::from_millis(1));
            }
            b.clear();
        }
        rx.stats()
    });
    let mut frame = vec![0u8; len];
    frame[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xbb]);
    frame[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xaa]);
    frame[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    let mut b = FrameBatch::with_buffers(64, 2048);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        for _ in 0..64 {
            b.push(&frame, Nanos(0));
        }
        tx.send_batch(&mut b, Nanos(0))?;
    }
    let elapsed = start.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let rs = receiver.join().map_err(|_| "receiver panicked")?;
    let ts = tx.stats();
    println!(
        "frame {len} B, {elapsed:.2} s: sent {:.0} pps, received {:.0} pps, tx drops {}, rx drops {}",
        ts.tx_packets as f64 / elapsed,
        rs.rx_packets as f64 / elapsed,
        ts.total_drops(),
        rs.total_drops()
    );
    Ok(())
}
