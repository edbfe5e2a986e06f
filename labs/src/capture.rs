//! Link captures (`pisa lab capture`): frames with their arrival times written as a pcap file
//! with nanosecond timestamps, from the in-memory driver's taps or from the two ends of a
//! cable in namespaces.

use std::path::Path;
use std::time::{Duration, Instant};

use dataplane::{AfPacketPort, FrameBatch, Nanos, Port};

/// Writes `frames` (arrival time, bytes) to `path`; returns how many.
pub fn write_pcap(path: &Path, frames: &[(Nanos, Vec<u8>)]) -> Result<usize, String> {
    let f = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let header = pcap_file::pcap::PcapHeader {
        ts_resolution: pcap_file::TsResolution::NanoSecond,
        ..pcap_file::pcap::PcapHeader::default()
    };
    let mut w = pcap_file::pcap::PcapWriter::with_header(f, header).map_err(|e| e.to_string())?;
    for (t, data) in frames {
        let p =
            pcap_file::pcap::PcapPacket::new(Duration::from_nanos(t.0), data.len() as u32, data);
        w.write_packet(&p).map_err(|e| e.to_string())?;
    }
    Ok(frames.len())
}

/// Receives on `ports` (each end of one cable, so each sees one direction) for `duration`;
/// frames stamped with wall-clock time since the Unix epoch, in arrival order.
pub fn record(ports: &mut [AfPacketPort], duration: Duration) -> Vec<(Nanos, Vec<u8>)> {
    let mut out = Vec::new();
    let mut batch = FrameBatch::new(64);
    let start = Instant::now();
    let epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    while start.elapsed() < duration {
        let mut got = 0;
        for p in ports.iter_mut() {
            batch.clear();
            let now = Nanos((epoch + start.elapsed()).as_nanos() as u64);
            if let Ok(n) = p.recv_batch(&mut batch, now) {
                got += n;
                out.extend(batch.iter().map(|f| (now, f.data.clone())));
            }
        }
        if got == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out
}
