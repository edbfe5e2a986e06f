//! RC loss recovery like a ConnectX: a NAK sequence error and an out-of-order READ response
//! make the requester go back N at once; the ACK timeout is the last resort. Goodput is
//! measured in the simulator's virtual time (deterministic for a seed), on a rate-limited
//! link, and compared with the lossless run on the same path.

mod sim;

use std::time::Duration;

use rdma::verbs::*;
use sim::*;

/// 16 MiB in 16 messages of 1 MiB.
const MSG: usize = 1 << 20;
const N_MSGS: usize = 16;

/// What one run delivered.
#[derive(Debug)]
struct Run {
    /// Virtual time from the first post to the last completion.
    elapsed: Duration,
    timeouts: u64,
    seq_naks: u64,
    recoveries: u64,
    retransmissions: u64,
}

impl Run {
    fn gbps(&self) -> f64 {
        (MSG * N_MSGS) as f64 * 8.0 / self.elapsed.as_nanos() as f64
    }
}

/// A 16 MiB stream of RDMA WRITEs (or READs) from side 0 at 10 Gb/s, 2 us one-way
/// latency, `loss` on both directions; ACK timeout 67 ms and retry count 7 (the RDMA CM
/// defaults), MTU 1024.
fn stream(seed: u64, loss: f64, read: bool) -> Run {
    let mut p = Pair::new(seed);
    p.rate_bps = 10_000_000_000;
    p.faults.loss = loss;
    let [a, b] = connect_rc(&mut p, MSG * N_MSGS, Mtu::M1024, 14, 7, 7);
    let data: Vec<u8> = (0..MSG * N_MSGS)
        .map(|i| (i * 131 + i / 977) as u8)
        .collect();
    let (src_ep, src_mr) = if read { (1, &b.mr) } else { (0, &a.mr) };
    p.ep[src_ep].mr_bytes_mut(src_mr.lkey).unwrap()[..].copy_from_slice(&data);
    for i in 0..N_MSGS {
        let off = (i * MSG) as u64;
        let op = if read {
            SendOp::Read {
                remote_addr: b.mr.addr + off,
                rkey: b.mr.rkey,
            }
        } else {
            SendOp::Write {
                remote_addr: b.mr.addr + off,
                rkey: b.mr.rkey,
            }
        };
        p.ep[0]
            .post_send(
                a.qpn,
                SendWr::new(i as u64, op, sge(&a.mr, off, MSG as u32)),
            )
            .unwrap();
    }
    let start = p.now;
    let mut done = 0;
    let ok = p.run_until(Duration::from_secs(600), |p| {
        for wc in p.ep[0].poll_cq(a.cq, usize::MAX).unwrap() {
            assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
            done += 1;
        }
        done == N_MSGS
    });
    let s = p.ep[0].stats();
    assert!(
        ok,
        "loss {loss}: {done} of {N_MSGS} messages in 600 s of virtual time, stats {s:?}"
    );
    // The QP's own NAK sequence error counter (`packet_seq_err`) saw every one of them.
    assert_eq!(p.ep[0].qp_seq_naks(a.qpn).unwrap(), s.seq_naks_received);
    let elapsed = p.now.saturating_duration_since(start);
    let (dst_ep, dst_mr) = if read { (0, &a.mr) } else { (1, &b.mr) };
    assert!(
        p.ep[dst_ep].mr_bytes(dst_mr.lkey).unwrap()[..] == data[..],
        "loss {loss}: the data arrived corrupted"
    );
    Run {
        elapsed,
        timeouts: s.timeouts,
        seq_naks: s.seq_naks_received,
        recoveries: s.recoveries,
        retransmissions: s.retransmissions,
    }
}

fn check(read: bool) {
    let what = if read { "READ" } else { "WRITE" };
    let clean = stream(11, 0.0, read);
    eprintln!("{what} 0 % loss: {:.3} Gb/s {clean:?}", clean.gbps());
    assert_eq!(clean.retransmissions, 0);
    for (loss, min_share) in [(0.01, 0.5), (0.05, 0.0)] {
        let r = stream(11, loss, read);
        let share = r.gbps() / clean.gbps();
        eprintln!(
            "{what} {} % loss: {:.3} Gb/s ({:.0} % of lossless) {r:?}",
            loss * 100.0,
            r.gbps(),
            share * 100.0
        );
        assert!(
            share >= min_share,
            "{what} at {} % loss: {:.3} Gb/s is {:.0} % of lossless ({:.3} Gb/s), want >= {:.0} %: {r:?}",
            loss * 100.0,
            r.gbps(),
            share * 100.0,
            clean.gbps(),
            min_share * 100.0
        );
        // Recovery is driven by NAKs and out-of-order READ responses: the 67 ms ACK
        // timeout may fire for a lost tail, not once per loss.
        assert!(r.timeouts <= 2, "{what} at {} % loss: {r:?}", loss * 100.0);
        assert!(
            r.retransmissions > 0 && r.recoveries < r.retransmissions,
            "{r:?}"
        );
        if !read {
            assert!(r.seq_naks > 0, "{r:?}");
        }
    }
}

#[test]
fn write_goodput_under_loss() {
    check(false);
}

#[test]
fn read_goodput_under_loss() {
    check(true);
}
