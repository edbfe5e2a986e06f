//! Fuzzes lib1pipe's packet input: arbitrary bytes as the 1Pipe header and payload, parsed and
//! handed to a process (any source, any time); errors or state changes, never a panic.

use hosts::onepipe::clock::HostClock;
use hosts::onepipe::process::{Config, Process};
use hosts::onepipe::wire::Header;

/// One input.
pub fn run(data: &[u8]) {
    let _ = Header::parse(data);
    let cfg = Config {
        id: 1,
        ack_timeout_ns: 1_000,
        window: 8,
    };
    let mut p = Process::init(cfg, HostClock::new(0, 0.0));
    let _ = p.unreliable_send(10, vec![(2, vec![1])]);
    let _ = p.reliable_send(20, vec![(3, vec![2])]);
    for (i, chunk) in data.chunks(24).enumerate() {
        let src = u16::from(chunk.first().copied().unwrap_or(0) % 4);
        let _ = p.on_packet(i as u64 * 1_000, src, chunk);
        p.on_timer(i as u64 * 1_000);
        while p.recv().is_some() {}
        while p.poll_transmit().is_some() {}
    }
}
