//! Acuerdo (Izraelevitz et al., ICPP 2022): atomic broadcast over RDMA, built from one-sided
//! WRITEs only. A leader per epoch `(round, leader)` writes each message with its header
//! `(epoch, count)` into every follower's ring buffer; followers accept what they find in
//! batches and tell the leader through a shared state table (SST); a quorum's acceptance
//! commits. Elections are a fixed-point vote that always elects an up-to-date node, whose
//! first message of the epoch is a diff bringing each follower's log in line.
//!
//! - [`types`]: epochs, headers, votes and their encoding (Figure 4, lines 1–7).
//! - [`msg`]: ring messages: payloads and diffs.
//! - [`core`](mod@core): the protocol, Figures 4–7, as an I/O-free state machine ([`Core`]).
//! - [`ring`]: the ring buffers' byte layout (records, wrap markers, credits).
//! - [`node`]: a node on pisa's RDMA endpoint: rings and SSTs in one MR, one RC QP per peer.
//! - [`kv`]: the replicated hash table of §4.3 (updates through Acuerdo, slots laid out for
//!   RDMA READ gets).
//! - [`ycsb`]: the YCSB-load workload (writes, scrambled zipfian 0.99) of Figure 9.
//! - [`check`]: the atomic-broadcast checker (integrity, no duplication, total order).
//! - `error`: [`AcuerdoError`].

pub mod check;
pub mod core;
pub mod error;
pub mod kv;
pub mod msg;
pub mod node;
pub mod ring;
pub mod types;
pub mod ycsb;

pub use self::core::{CommitRow, Config, Core, CoreStats, Delivery, Event, Output, Role, Table};
pub use check::{check, Agreement, Entry};
pub use error::AcuerdoError;
pub use msg::{Body, Diff, Message};
pub use types::{Epoch, MsgHdr, Pid, Vote};

/// The fuzz target's body (`fuzz/targets/src/hosts_acuerdo_ring.rs`): arbitrary bytes as
/// an incoming ring (as a remote writer could leave it) and as a message: every record the
/// reader takes (after peeking at it, which must find the same) goes to a node's core, the
/// message to another; never a panic.
#[doc(hidden)]
pub fn fuzz_input(data: &[u8]) {
    let mut core = Core::new(Config::new(0, 3)).expect("valid settings");
    let _ = Message::decode(data);
    core.receive(1, data);
    let cap = (data.len() / 8) * 8;
    if cap >= 16 {
        let mut ring = data[..cap].to_vec();
        let mut r = ring::Reader::default();
        for _ in 0..64 {
            // A peek (as the group ring is read) leaves the record for the take.
            let peeked = r.peek(&mut ring);
            let taken = r.take(&mut ring);
            assert!(
                peeked.is_err() || peeked == taken,
                "a peek and the take disagree"
            );
            match taken {
                Ok(Some(body)) => core.receive(1, &body),
                _ => break,
            }
        }
    }
    core.tick(1_000);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_ring_memory_or_message_is_taken_or_refused_without_a_panic(
            data in proptest::collection::vec(any::<u8>(), 0..600)
        ) {
            super::fuzz_input(&data);
        }
    }
}
