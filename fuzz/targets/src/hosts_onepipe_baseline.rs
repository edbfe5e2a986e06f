//! Fuzzes the Fig. 8 baselines' packet input (hosts::onepipe::baselines): arbitrary bytes as
//! sequenced scatterings, tokens, data and clock packets, handed to a member of each scheme;
//! and the key-value store's (hosts::onepipe::kv): lock packets and 1Pipe write messages;
//! errors or state changes, never a panic.

use hosts::onepipe::baselines::{Member, Scheme};
use hosts::onepipe::kv::{parse_writes, LockNode};

/// One input.
pub fn run(data: &[u8]) {
    let schemes = [
        Scheme::Sequencer,
        Scheme::Token { batch: 2 },
        Scheme::Lamport { exchange_ns: 100 },
    ];
    for scheme in schemes {
        let mut m = Member::new(1, vec![0, 1, 2], scheme);
        m.send(0, vec![(0, vec![1; 8]), (2, vec![2; 8])]);
        for (i, chunk) in data.chunks(48).enumerate() {
            let _ = m.on_packet(chunk);
            m.on_timer(i as u64 * 50);
            while m.recv().is_some() {}
            while m.poll_transmit().is_some() {}
        }
    }
    let mut n = LockNode::new(1, vec![0, 1, 2], 2);
    n.start(0, 7, &[1, 2, 3]);
    for (i, chunk) in data.chunks(25).enumerate() {
        let _ = parse_writes(chunk);
        let _ = n.on_packet(i as u64, (i % 3) as u16, chunk);
        while n.poll_transmit().is_some() {}
    }
}
