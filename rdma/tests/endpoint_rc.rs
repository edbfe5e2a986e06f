//! RC transport between two endpoints over a simulated link: every operation, loss /
//! duplication / reordering, protection errors, retry exhaustion, RNR, credits.

mod sim;

use std::time::Duration;

use rdma::verbs::*;
use sim::*;

fn fill(ep: &mut Endpoint, mr: &MrInfo, off: usize, data: &[u8]) {
    ep.mr_bytes_mut(mr.lkey).unwrap()[off..off + data.len()].copy_from_slice(data);
}

#[test]
fn every_operation_works_on_a_clean_link() {
    let mut p = Pair::new(1);
    let [a, b] = connect_rc(&mut p, 1 << 16, Mtu::M1024, 14, 7, 7);
    let msg: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    fill(&mut p.ep[0], &a.mr, 0, &msg);
    // SEND with immediate (3 packets), into a posted receive.
    p.ep[1]
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 100,
                sg_list: vec![sge(&b.mr, 0, 4096)],
            },
        )
        .unwrap();
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(1, SendOp::SendWithImm(0xabcd), sge(&a.mr, 0, 3000)),
        )
        .unwrap();
    // RDMA WRITE to b at offset 8192.
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                2,
                SendOp::Write {
                    remote_addr: b.mr.addr + 8192,
                    rkey: b.mr.rkey,
                },
                sge(&a.mr, 0, 2500),
            ),
        )
        .unwrap();
    // RDMA READ back what was written into a at offset 16384.
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                3,
                SendOp::Read {
                    remote_addr: b.mr.addr + 8192,
                    rkey: b.mr.rkey,
                },
                sge(&a.mr, 16384, 2500),
            ),
        )
        .unwrap();
    // Atomics on b at offset 32768.
    fill(&mut p.ep[1], &b.mr, 32768, &40u64.to_le_bytes());
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                4,
                SendOp::FetchAdd {
                    remote_addr: b.mr.addr + 32768,
                    rkey: b.mr.rkey,
                    add: 2,
                },
                sge(&a.mr, 40000, 8),
            ),
        )
        .unwrap();
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                5,
                SendOp::CompareSwap {
                    remote_addr: b.mr.addr + 32768,
                    rkey: b.mr.rkey,
                    compare: 42,
                    swap: 7,
                },
                sge(&a.mr, 40008, 8),
            ),
        )
        .unwrap();
    // WRITE with immediate consumes a receive.
    p.ep[1]
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 101,
                sg_list: vec![],
            },
        )
        .unwrap();
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                6,
                SendOp::WriteWithImm {
                    remote_addr: b.mr.addr + 50000,
                    rkey: b.mr.rkey,
                    imm: 9,
                },
                sge(&a.mr, 0, 10),
            ),
        )
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));

    let wcs = drain_cq(&mut p.ep[0], a.cq);
    let ids: Vec<u64> = wcs.iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, vec![1, 2, 3, 4, 5, 6]);
    assert!(wcs.iter().all(|w| w.status == WcStatus::Success), "{wcs:?}");
    assert_eq!(wcs[2].opcode, WcOpcode::RdmaRead);
    let recv = drain_cq(&mut p.ep[1], b.cq);
    assert_eq!(recv.len(), 2);
    assert_eq!(
        (recv[0].wr_id, recv[0].byte_len, recv[0].imm_data),
        (100, 3000, Some(0xabcd))
    );
    assert_eq!(recv[0].opcode, WcOpcode::Recv);
    assert_eq!(
        (
            recv[1].wr_id,
            recv[1].opcode,
            recv[1].imm_data,
            recv[1].byte_len
        ),
        (101, WcOpcode::RecvRdmaWithImm, Some(9), 10)
    );
    let bm = p.ep[1].mr_bytes(b.mr.lkey).unwrap();
    assert_eq!(&bm[..3000], &msg[..]);
    assert_eq!(&bm[8192..8192 + 2500], &msg[..2500]);
    assert_eq!(u64::from_le_bytes(bm[32768..32776].try_into().unwrap()), 7);
    assert_eq!(&bm[50000..50010], &msg[..10]);
    let am = p.ep[0].mr_bytes(a.mr.lkey).unwrap();
    assert_eq!(&am[16384..16384 + 2500], &msg[..2500]);
    assert_eq!(u64::from_le_bytes(am[40000..40008].try_into().unwrap()), 40);
    assert_eq!(u64::from_le_bytes(am[40008..40016].try_into().unwrap()), 42);
    assert_eq!(p.ep[0].stats().retransmissions, 0);
    assert_eq!(
        p.ep[0].stats().rx_icrc_errors + p.ep[1].stats().rx_icrc_errors,
        0
    );
}

/// Posts a stream of SENDs of varied sizes plus WRITEs and READs, with impairments;
/// checks that every byte arrives exactly once, in order, and completions match.
fn stream(seed: u64, faults: Faults, mtu: Mtu, n_msgs: usize) -> Pair {
    let mut p = Pair::new(seed);
    p.faults = faults;
    let mr_len = 4 << 20;
    let [a, b] = connect_rc(&mut p, mr_len, mtu, 8, 7, 7);
    let mut rng = Rng(seed.wrapping_mul(31) | 1);
    let src: Vec<u8> = (0..mr_len).map(|_| rng.next() as u8).collect();
    fill(&mut p.ep[0], &a.mr, 0, &src);
    fill(&mut p.ep[1], &b.mr, 0, &src);
    let slot = 8192u64;
    let upper = 3 << 20; // WRITE targets and READ destinations live above 3 MiB
    let mut expect_recv = Vec::new();
    let mut expect_ids = Vec::new();
    let mut writes = Vec::new();
    let mut reads = Vec::new();
    for i in 0..n_msgs {
        let len = 1 + rng.below(6000) as u32;
        let off = rng.below(1 << 20);
        match i % 5 {
            0..=2 => {
                let roff = i as u64 * slot;
                p.ep[1]
                    .post_recv(
                        b.qpn,
                        RecvWr {
                            wr_id: i as u64,
                            sg_list: vec![sge(&b.mr, roff, slot as u32)],
                        },
                    )
                    .unwrap();
                p.ep[0]
                    .post_send(
                        a.qpn,
                        SendWr::new(i as u64, SendOp::Send, sge(&a.mr, off, len)),
                    )
                    .unwrap();
                expect_recv.push((
                    i as u64,
                    roff,
                    src[off as usize..(off + u64::from(len)) as usize].to_vec(),
                ));
            }
            3 => {
                // Disjoint targets so the final memory is checkable.
                let dst = upper + (i as u64 / 5) * slot;
                p.ep[0]
                    .post_send(
                        a.qpn,
                        SendWr::new(
                            i as u64,
                            SendOp::Write {
                                remote_addr: b.mr.addr + dst,
                                rkey: b.mr.rkey,
                            },
                            sge(&a.mr, off, len),
                        ),
                    )
                    .unwrap();
                writes.push((dst, off, len));
            }
            _ => {
                // Sources above the receive slots, below the WRITE targets: untouched.
                let from = (5 << 19) + rng.below(1 << 18);
                let into = upper + (i as u64 / 5) * slot;
                p.ep[0]
                    .post_send(
                        a.qpn,
                        SendWr::new(
                            i as u64,
                            SendOp::Read {
                                remote_addr: b.mr.addr + from,
                                rkey: b.mr.rkey,
                            },
                            sge(&a.mr, into, len),
                        ),
                    )
                    .unwrap();
                reads.push((into, from, len));
            }
        }
        expect_ids.push(i as u64);
    }
    let mut got_recv = Vec::new();
    let mut got_ids = Vec::new();
    let ok = p.run_until(Duration::from_secs(60), |p| {
        for wc in p.ep[1].poll_cq(b.cq, usize::MAX).unwrap() {
            assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
            got_recv.push((wc.wr_id, wc.byte_len));
        }
        for wc in p.ep[0].poll_cq(a.cq, usize::MAX).unwrap() {
            assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
            got_ids.push(wc.wr_id);
        }
        got_ids.len() == n_msgs && got_recv.len() == expect_recv.len()
    });
    assert!(
        ok,
        "stalled: {} of {} completions, {} of {} receives, stats {:?}",
        got_ids.len(),
        n_msgs,
        got_recv.len(),
        expect_recv.len(),
        p.ep[0].stats()
    );
    assert_eq!(got_ids, expect_ids);
    let bm = p.ep[1].mr_bytes(b.mr.lkey).unwrap();
    for ((id, len), (eid, roff, data)) in got_recv.iter().zip(&expect_recv) {
        assert_eq!((id, *len as usize), (eid, data.len()));
        assert!(
            bm[*roff as usize..*roff as usize + data.len()] == data[..],
            "message {eid} corrupted"
        );
    }
    for (dst, off, len) in writes {
        let (d, o, l) = (dst as usize, off as usize, len as usize);
        assert!(bm[d..d + l] == src[o..o + l], "write to {dst} corrupted");
    }
    let am = p.ep[0].mr_bytes(a.mr.lkey).unwrap();
    for (into, from, len) in reads {
        let (i, f, l) = (into as usize, from as usize, len as usize);
        assert!(am[i..i + l] == src[f..f + l], "read into {into} corrupted");
    }
    p
}

#[test]
fn stream_clean() {
    let p = stream(2, Faults::default(), Mtu::M1024, 300);
    assert_eq!(p.ep[0].stats().retransmissions, 0);
}

#[test]
fn stream_with_one_percent_loss() {
    let p = stream(
        3,
        Faults {
            loss: 0.01,
            ..Default::default()
        },
        Mtu::M1024,
        300,
    );
    assert!(p.dropped > 0);
}

#[test]
fn stream_with_five_percent_loss_duplication_and_reordering() {
    let f = Faults {
        loss: 0.05,
        dup: 0.02,
        reorder: 0.05,
        ..Default::default()
    };
    let p = stream(4, f, Mtu::M512, 300);
    assert!(p.dropped > 0);
    assert!(p.ep[1].stats().duplicates + p.ep[0].stats().duplicates > 0);
}

#[test]
fn stream_with_small_mtu_and_psn_wrap() {
    let f = Faults {
        loss: 0.02,
        reorder: 0.02,
        ..Default::default()
    };
    stream(5, f, Mtu::M256, 200);
}

#[test]
fn wrong_rkey_is_a_remote_access_error_and_writes_nothing() {
    let mut p = Pair::new(6);
    let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
    fill(&mut p.ep[0], &a.mr, 0, &[0xEE; 64]);
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                1,
                SendOp::Write {
                    remote_addr: b.mr.addr,
                    rkey: b.mr.rkey ^ 0x100,
                },
                sge(&a.mr, 0, 64),
            ),
        )
        .unwrap();
    p.ep[0]
        .post_send(a.qpn, SendWr::new(2, SendOp::Send, sge(&a.mr, 0, 8)))
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    let wcs = drain_cq(&mut p.ep[0], a.cq);
    assert_eq!(wcs[0].wr_id, 1);
    assert_eq!(wcs[0].status, WcStatus::RemAccessErr);
    assert_eq!(wcs[1].status, WcStatus::WrFlushErr);
    assert_eq!(p.ep[0].qp_state(a.qpn).unwrap(), QpState::Err);
    assert_eq!(p.ep[1].qp_state(b.qpn).unwrap(), QpState::Err);
    assert!(p.ep[1].mr_bytes(b.mr.lkey).unwrap().iter().all(|&x| x == 0));
    assert_eq!(p.ep[1].stats().fatal_naks_sent, 1);
}

#[test]
fn out_of_bounds_write_and_read_are_refused() {
    for op in 0..2 {
        let mut p = Pair::new(7);
        let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
        fill(&mut p.ep[0], &a.mr, 0, &[0xEE; 64]);
        let (remote_addr, rkey) = (b.mr.addr + 4096 - 32, b.mr.rkey);
        let wr = if op == 0 {
            SendOp::Write { remote_addr, rkey }
        } else {
            SendOp::Read { remote_addr, rkey }
        };
        p.ep[0]
            .post_send(a.qpn, SendWr::new(9, wr, sge(&a.mr, 0, 64)))
            .unwrap();
        assert!(p.settle(Duration::from_secs(1)));
        let wcs = drain_cq(&mut p.ep[0], a.cq);
        assert_eq!(wcs.len(), 1);
        assert_eq!(wcs[0].status, WcStatus::RemAccessErr);
        assert!(p.ep[1].mr_bytes(b.mr.lkey).unwrap().iter().all(|&x| x == 0));
    }
}

#[test]
fn local_protection_is_checked_at_post() {
    let mut p = Pair::new(8);
    let [a, _b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
    let r = p.ep[0].post_send(a.qpn, SendWr::new(1, SendOp::Send, sge(&a.mr, 4000, 200)));
    assert!(matches!(r, Err(VerbsError::LocalProtection(_))));
    let bad = Sge {
        addr: a.mr.addr,
        length: 4,
        lkey: 0xdead,
    };
    assert!(p.ep[0]
        .post_send(a.qpn, SendWr::new(1, SendOp::Send, bad))
        .is_err());
}

#[test]
fn peer_gone_ends_in_retry_exceeded_without_hanging() {
    let mut p = Pair::new(9);
    let [a, _b] = connect_rc(&mut p, 4096, Mtu::M1024, 4, 3, 7);
    p.faults.cut = true;
    p.ep[0]
        .post_send(a.qpn, SendWr::new(1, SendOp::Send, sge(&a.mr, 0, 100)))
        .unwrap();
    p.ep[0]
        .post_send(a.qpn, SendWr::new(2, SendOp::Send, sge(&a.mr, 0, 100)))
        .unwrap();
    // settle() returns true only when no timers remain: no hang.
    assert!(p.settle(Duration::from_secs(10)));
    let wcs = drain_cq(&mut p.ep[0], a.cq);
    assert_eq!(wcs.len(), 2);
    assert_eq!((wcs[0].wr_id, wcs[0].status), (1, WcStatus::RetryExcErr));
    assert_eq!((wcs[1].wr_id, wcs[1].status), (2, WcStatus::WrFlushErr));
    // Initial send + 3 retries.
    assert_eq!(p.ep[0].stats().timeouts, 4);
    assert_eq!(p.ep[0].qp_state(a.qpn).unwrap(), QpState::Err);
}

#[test]
fn rnr_nak_waits_and_resends_until_a_receive_is_posted() {
    let mut p = Pair::new(10);
    let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
    fill(&mut p.ep[0], &a.mr, 0, b"hello");
    p.ep[0]
        .post_send(a.qpn, SendWr::new(1, SendOp::Send, sge(&a.mr, 0, 5)))
        .unwrap();
    p.run_until(Duration::from_micros(100), |p| {
        p.ep[1].stats().rnr_naks_sent >= 2
    });
    assert!(p.ep[1].stats().rnr_naks_sent >= 2);
    assert!(drain_cq(&mut p.ep[0], a.cq).is_empty());
    p.ep[1]
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 7,
                sg_list: vec![sge(&b.mr, 0, 64)],
            },
        )
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    assert_eq!(drain_cq(&mut p.ep[0], a.cq)[0].status, WcStatus::Success);
    let r = drain_cq(&mut p.ep[1], b.cq);
    assert_eq!((r[0].wr_id, r[0].byte_len), (7, 5));
    assert_eq!(&p.ep[1].mr_bytes(b.mr.lkey).unwrap()[..5], b"hello");
}

#[test]
fn rnr_retry_exhaustion_is_reported() {
    let mut p = Pair::new(11);
    let [a, _b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 2);
    p.ep[0]
        .post_send(a.qpn, SendWr::new(1, SendOp::Send, sge(&a.mr, 0, 5)))
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    let wcs = drain_cq(&mut p.ep[0], a.cq);
    assert_eq!(wcs[0].status, WcStatus::RnrRetryExcErr);
    assert_eq!(p.ep[1].stats().rnr_naks_sent, 3);
}

#[test]
fn credits_in_acks_follow_posted_receives() {
    let mut p = Pair::new(12);
    p.keep_log = true;
    let [a, b] = connect_rc(&mut p, 1 << 16, Mtu::M1024, 10, 7, 7);
    for i in 0..6 {
        p.ep[1]
            .post_recv(
                b.qpn,
                RecvWr {
                    wr_id: i,
                    sg_list: vec![sge(&b.mr, i * 64, 64)],
                },
            )
            .unwrap();
    }
    for i in 0..10 {
        p.ep[0]
            .post_send(a.qpn, SendWr::new(i, SendOp::Send, sge(&a.mr, 0, 16)))
            .unwrap();
    }
    // Post the missing receives a little later.
    p.run_until(Duration::from_millis(2), |_| false);
    for i in 6..10 {
        p.ep[1]
            .post_recv(
                b.qpn,
                RecvWr {
                    wr_id: i,
                    sg_list: vec![sge(&b.mr, i * 64, 64)],
                },
            )
            .unwrap();
    }
    assert!(p.settle(Duration::from_secs(1)));
    assert_eq!(drain_cq(&mut p.ep[0], a.cq).len(), 10);
    assert_eq!(drain_cq(&mut p.ep[1], b.cq).len(), 10);
    // The first ACK from b advertised the receives left at that moment.
    let first_ack = p
        .log
        .iter()
        .filter(|(s, _)| *s == 1)
        .filter_map(|(_, f)| rdma::decode::decode_frame(f).ok())
        .find(|d| d.headers.aeth.is_some())
        .unwrap();
    let syn = first_ack.headers.aeth.unwrap().syndrome;
    assert!(
        matches!(syn, rdma::wire::Syndrome::Ack { credit_code } if credit_code < 6),
        "{syn:?}"
    );
}

#[test]
fn icrc_check_can_be_switched_off() {
    let mut p = Pair::new(13);
    let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
    p.ep[1]
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 1,
                sg_list: vec![sge(&b.mr, 0, 64)],
            },
        )
        .unwrap();
    p.ep[0]
        .post_send(a.qpn, SendWr::new(1, SendOp::Send, sge(&a.mr, 0, 8)))
        .unwrap();
    let mut f = p.ep[0].poll_transmit(p.now).unwrap();
    let n = f.len();
    f[n - 1] ^= 0xFF;
    p.ep[1].handle_frame(p.now, &f);
    assert_eq!(p.ep[1].stats().rx_icrc_errors, 1);
    assert!(drain_cq(&mut p.ep[1], b.cq).is_empty());
    p.ep[1].set_icrc_check(false);
    p.ep[1].handle_frame(p.now, &f);
    assert_eq!(drain_cq(&mut p.ep[1], b.cq).len(), 1);
}

#[test]
fn ce_marks_make_the_receiver_send_cnps_and_the_sender_slow_down() {
    let mut p = Pair::new(14);
    p.faults.ce_mark = 0.5;
    let [a, b] = connect_rc(&mut p, 1 << 20, Mtu::M4096, 10, 7, 7);
    let before = p.ep[0].qp_rate_bps(a.qpn).unwrap();
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                1,
                SendOp::Write {
                    remote_addr: b.mr.addr,
                    rkey: b.mr.rkey,
                },
                sge(&a.mr, 0, 1 << 20),
            ),
        )
        .unwrap();
    assert!(
        p.run_until(Duration::from_secs(1), |p| !drain_cq(&mut p.ep[0], a.cq)
            .is_empty())
    );
    let s1 = p.ep[1].stats();
    assert!(s1.cnps_sent >= 1);
    assert!(p.ep[0].stats().cnps_received >= 1);
    assert!(p.ep[0].qp_rate_bps(a.qpn).unwrap() < before);
}

#[test]
fn send_with_invalidate_revokes_the_rkey() {
    let mut p = Pair::new(15);
    let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
    p.ep[1]
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 1,
                sg_list: vec![sge(&b.mr, 0, 64)],
            },
        )
        .unwrap();
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(1, SendOp::SendWithInv(b.mr.rkey), sge(&a.mr, 0, 8)),
        )
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    let r = drain_cq(&mut p.ep[1], b.cq);
    assert_eq!(r[0].invalidated_rkey, Some(b.mr.rkey));
    assert_eq!(drain_cq(&mut p.ep[0], a.cq)[0].status, WcStatus::Success);
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                2,
                SendOp::Write {
                    remote_addr: b.mr.addr,
                    rkey: b.mr.rkey,
                },
                sge(&a.mr, 0, 8),
            ),
        )
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    assert_eq!(
        drain_cq(&mut p.ep[0], a.cq)[0].status,
        WcStatus::RemAccessErr
    );
}

#[test]
fn sqd_holds_new_requests_until_rts() {
    let mut p = Pair::new(16);
    let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
    p.ep[0]
        .modify_qp(
            a.qpn,
            &QpAttr {
                state: Some(QpState::Sqd),
                ..Default::default()
            },
        )
        .unwrap();
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                1,
                SendOp::Write {
                    remote_addr: b.mr.addr,
                    rkey: b.mr.rkey,
                },
                sge(&a.mr, 0, 8),
            ),
        )
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    assert!(drain_cq(&mut p.ep[0], a.cq).is_empty());
    p.ep[0]
        .modify_qp(
            a.qpn,
            &QpAttr {
                state: Some(QpState::Rts),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    assert_eq!(drain_cq(&mut p.ep[0], a.cq).len(), 1);
}

#[test]
fn pacing_during_rnr_wait_does_not_spin() {
    // Every packet CE-marked: the sender is rate limited while the receiver has no
    // receive WQE (RNR). The simulated link panics if timers spin without progress.
    let mut p = Pair::new(17);
    p.faults.ce_mark = 1.0;
    let [a, b] = connect_rc(&mut p, 1 << 16, Mtu::M1024, 10, 7, 7);
    for i in 0..4 {
        p.ep[0]
            .post_send(a.qpn, SendWr::new(i, SendOp::Send, sge(&a.mr, 0, 3000)))
            .unwrap();
    }
    p.run_until(Duration::from_millis(5), |_| false);
    assert!(p.ep[1].stats().rnr_naks_sent > 0);
    for i in 0..4 {
        p.ep[1]
            .post_recv(
                b.qpn,
                RecvWr {
                    wr_id: i,
                    sg_list: vec![sge(&b.mr, i * 4096, 4096)],
                },
            )
            .unwrap();
    }
    assert!(p.settle(Duration::from_secs(5)));
    assert_eq!(drain_cq(&mut p.ep[1], b.cq).len(), 4);
    assert_eq!(drain_cq(&mut p.ep[0], a.cq).len(), 4);
    assert!(p.ep[0].qp_rate_bps(a.qpn).unwrap() <= 100e9);
}

#[test]
fn same_seed_same_frames() {
    let run = || {
        let mut p = Pair::new(18);
        p.keep_log = true;
        p.faults = Faults {
            loss: 0.05,
            reorder: 0.05,
            dup: 0.02,
            ..Default::default()
        };
        let [a, b] = connect_rc(&mut p, 1 << 16, Mtu::M512, 8, 7, 7);
        for i in 0..20 {
            p.ep[1]
                .post_recv(
                    b.qpn,
                    RecvWr {
                        wr_id: i,
                        sg_list: vec![sge(&b.mr, 0, 4096)],
                    },
                )
                .unwrap();
            p.ep[0]
                .post_send(
                    a.qpn,
                    SendWr::new(i, SendOp::Send, sge(&a.mr, i * 100, 2000)),
                )
                .unwrap();
        }
        assert!(p.settle(Duration::from_secs(10)));
        assert_eq!(drain_cq(&mut p.ep[0], a.cq).len(), 20);
        p.log
    };
    let (x, y) = (run(), run());
    assert!(x.len() > 40);
    assert!(x == y);
}

#[test]
fn rc_over_ipv6_with_static_neighbours() {
    use std::net::{IpAddr, Ipv6Addr};
    let v6 = |i: u16| Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, i);
    let mut p = Pair::with_config(19, |_| {});
    // Rebuild the endpoints with IPv6 addresses.
    for (i, e) in p.ep.iter_mut().enumerate() {
        let mut cfg = *e.config();
        cfg.device.ipv6 = Some(v6(i as u16 + 1));
        *e = Endpoint::new(cfg);
    }
    let a = setup_side(&mut p.ep[0], 1 << 14, QpType::Rc);
    let b = setup_side(&mut p.ep[1], 1 << 14, QpType::Rc);
    p.ep[0].add_neighbour(IpAddr::V6(v6(2)), mac(2));
    p.ep[1].add_neighbour(IpAddr::V6(v6(1)), mac(1));
    for (i, (me, peer)) in [(&a, &b), (&b, &a)].into_iter().enumerate() {
        let steps = [
            QpAttr {
                state: Some(QpState::Init),
                access: Some(AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rtr),
                path_mtu: Some(Mtu::M1024),
                dest_qp_num: Some(peer.qpn),
                remote_ip: Some(IpAddr::V6(v6(2 - i as u16))),
                rq_psn: Some(5),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rts),
                sq_psn: Some(5),
                ..Default::default()
            },
        ];
        for s in &steps {
            p.ep[i].modify_qp(me.qpn, s).unwrap();
        }
    }
    p.ep[0].mr_bytes_mut(a.mr.lkey).unwrap()[..3000].fill(9);
    p.ep[0]
        .post_send(
            a.qpn,
            SendWr::new(
                1,
                SendOp::Write {
                    remote_addr: b.mr.addr,
                    rkey: b.mr.rkey,
                },
                sge(&a.mr, 0, 3000),
            ),
        )
        .unwrap();
    p.keep_log = true;
    assert!(p.settle(Duration::from_secs(1)));
    assert_eq!(drain_cq(&mut p.ep[0], a.cq)[0].status, WcStatus::Success);
    assert!(p.ep[1].mr_bytes(b.mr.lkey).unwrap()[..3000]
        .iter()
        .all(|&x| x == 9));
    let d = rdma::decode::decode_frame(&p.log[0].1).unwrap();
    assert!(d.icrc_ok && d.src.is_ipv6());
}

/// Many seeds of the impaired stream; run with `cargo test -- --ignored soak`.
#[test]
#[ignore]
fn soak_impaired_streams() {
    let seeds: u64 = std::env::var("SOAK_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    for seed in 100..100 + seeds {
        let f = Faults {
            loss: 0.05,
            dup: 0.03,
            reorder: 0.1,
            ..Default::default()
        };
        let mtu = [Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M4096][(seed % 4) as usize];
        stream(seed, f, mtu, 120);
    }
}

#[test]
fn atomics_execute_exactly_once_under_loss_and_duplication() {
    let mut p = Pair::new(20);
    p.faults = Faults {
        loss: 0.05,
        dup: 0.1,
        reorder: 0.05,
        ..Default::default()
    };
    let [a, b] = connect_rc(&mut p, 1 << 16, Mtu::M1024, 8, 7, 7);
    let n = 200u64;
    for i in 0..n {
        let wr = SendOp::FetchAdd {
            remote_addr: b.mr.addr + 64,
            rkey: b.mr.rkey,
            add: 1,
        };
        p.ep[0]
            .post_send(a.qpn, SendWr::new(i, wr, sge(&a.mr, i * 8, 8)))
            .unwrap();
    }
    assert!(p.settle(Duration::from_secs(30)));
    let wcs = drain_cq(&mut p.ep[0], a.cq);
    assert_eq!(wcs.len(), n as usize);
    let bad: Vec<_> = wcs
        .iter()
        .filter(|w| w.status != WcStatus::Success)
        .collect();
    assert!(
        bad.is_empty(),
        "{:?} {:?} {:?}",
        &bad[..bad.len().min(3)],
        p.ep[0].stats(),
        p.ep[1].stats()
    );
    let bm = p.ep[1].mr_bytes(b.mr.lkey).unwrap();
    assert_eq!(u64::from_le_bytes(bm[64..72].try_into().unwrap()), n);
    let am = p.ep[0].mr_bytes(a.mr.lkey).unwrap();
    for i in 0..n as usize {
        assert_eq!(
            u64::from_le_bytes(am[i * 8..i * 8 + 8].try_into().unwrap()),
            i as u64
        );
    }
    assert!(p.ep[1].stats().duplicates > 0);
}

#[test]
fn send_larger_than_the_receive_buffer_fails_on_both_sides() {
    let mut p = Pair::new(21);
    let [a, b] = connect_rc(&mut p, 8192, Mtu::M1024, 10, 7, 7);
    p.ep[1]
        .post_recv(
            b.qpn,
            RecvWr {
                wr_id: 1,
                sg_list: vec![sge(&b.mr, 0, 100)],
            },
        )
        .unwrap();
    p.ep[0]
        .post_send(a.qpn, SendWr::new(1, SendOp::Send, sge(&a.mr, 0, 2000)))
        .unwrap();
    assert!(p.settle(Duration::from_secs(1)));
    assert_eq!(drain_cq(&mut p.ep[1], b.cq)[0].status, WcStatus::LocLenErr);
    assert_eq!(
        drain_cq(&mut p.ep[0], a.cq)[0].status,
        WcStatus::RemInvReqErr
    );
}

#[test]
fn oversized_messages_and_mrs_are_refused_at_post() {
    let mut p = Pair::new(22);
    let [a, _b] = connect_rc(&mut p, 4096, Mtu::M256, 10, 7, 7);
    let pd = p.ep[0].alloc_pd();
    assert!(matches!(
        p.ep[0].reg_mr(pd, usize::MAX, AccessFlags::NONE),
        Err(VerbsError::TooLong { .. })
    ));
    let sges = vec![sge(&a.mr, 0, 4096); 300_000];
    let wr = SendWr {
        wr_id: 1,
        op: SendOp::Send,
        sg_list: sges,
        signaled: true,
        solicited: false,
        ud: None,
    };
    assert!(matches!(
        p.ep[0].post_send(a.qpn, wr),
        Err(VerbsError::TooLong { .. })
    ));
}

/// Mixed SEND / READ / WRITE / FETCH_ADD over heavier impairments, many seeds; run with
/// `cargo test -- --ignored soak`.
#[test]
#[ignore]
fn soak_mixed_operations() {
    let seeds: u64 = std::env::var("SOAK_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    for seed in 1..=seeds {
        let mut p = Pair::new(seed);
        p.faults = Faults {
            loss: 0.03 + (seed % 5) as f64 * 0.02,
            dup: 0.03,
            reorder: 0.1,
            ..Default::default()
        };
        let mtu = [Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M4096][(seed % 4) as usize];
        let [a, b] = connect_rc(&mut p, 1 << 20, mtu, 8, 7, 7);
        let mut rng = Rng((seed * 77) | 1);
        let mut adds = 0u64;
        for i in 0..30u64 {
            let len = 1 + rng.below(6000) as u32;
            let op = if i % 7 == 6 {
                adds += 1;
                p.ep[0]
                    .post_send(
                        a.qpn,
                        SendWr::new(
                            i,
                            SendOp::FetchAdd {
                                remote_addr: b.mr.addr + 8,
                                rkey: b.mr.rkey,
                                add: 1,
                            },
                            sge(&a.mr, 900_000 + i * 8, 8),
                        ),
                    )
                    .unwrap();
                continue;
            } else if i % 3 == 0 {
                p.ep[1]
                    .post_recv(
                        b.qpn,
                        RecvWr {
                            wr_id: i,
                            sg_list: vec![sge(&b.mr, i * 8192, 8192)],
                        },
                    )
                    .unwrap();
                SendOp::Send
            } else if i % 3 == 1 {
                SendOp::Read {
                    remote_addr: b.mr.addr + 64,
                    rkey: b.mr.rkey,
                }
            } else {
                SendOp::Write {
                    remote_addr: b.mr.addr + 64,
                    rkey: b.mr.rkey,
                }
            };
            p.ep[0]
                .post_send(a.qpn, SendWr::new(i, op, sge(&a.mr, i * 8192, len)))
                .unwrap();
        }
        assert!(
            p.settle(Duration::from_secs(30)),
            "seed {seed}: timers still running"
        );
        let wcs = drain_cq(&mut p.ep[0], a.cq);
        assert_eq!(wcs.len(), 30, "seed {seed}");
        assert!(
            wcs.iter().all(|w| w.status == WcStatus::Success),
            "seed {seed}: {wcs:?}"
        );
        let bm = p.ep[1].mr_bytes(b.mr.lkey).unwrap();
        assert_eq!(
            u64::from_le_bytes(bm[8..16].try_into().unwrap()),
            adds,
            "seed {seed}"
        );
    }
}

/// After an ACK advertising zero credits, the requester sends only one probe message
/// until the responder posts receives; with credits off it sends everything.
#[test]
fn requester_honours_zero_credits() {
    for advertise in [true, false] {
        let mut p = Pair::with_config(23, |c| c.transport.advertise_credits = advertise);
        let [a, b] = connect_rc(&mut p, 4096, Mtu::M1024, 10, 7, 7);
        for i in 0..2 {
            p.ep[1]
                .post_recv(
                    b.qpn,
                    RecvWr {
                        wr_id: i,
                        sg_list: vec![sge(&b.mr, i * 64, 64)],
                    },
                )
                .unwrap();
            p.ep[0]
                .post_send(a.qpn, SendWr::new(i, SendOp::Send, sge(&a.mr, 0, 16)))
                .unwrap();
        }
        assert!(p.settle(Duration::from_secs(1)));
        assert_eq!(drain_cq(&mut p.ep[0], a.cq).len(), 2);
        p.keep_log = true;
        for i in 2..5 {
            p.ep[0]
                .post_send(a.qpn, SendWr::new(i, SendOp::Send, sge(&a.mr, 0, 16)))
                .unwrap();
        }
        p.run_until(Duration::from_micros(200), |_| false);
        let mut psns: Vec<u32> = p
            .log
            .iter()
            .filter(|(s, _)| *s == 0)
            .filter_map(|(_, f)| rdma::decode::decode_frame(f).ok())
            .map(|d| d.headers.bth.psn)
            .collect();
        psns.sort();
        psns.dedup();
        if advertise {
            assert_eq!(psns.len(), 1, "only the probe may go out: {psns:?}");
        } else {
            assert_eq!(psns.len(), 3, "{psns:?}");
        }
        for i in 2..5 {
            p.ep[1]
                .post_recv(
                    b.qpn,
                    RecvWr {
                        wr_id: i,
                        sg_list: vec![sge(&b.mr, i * 64, 64)],
                    },
                )
                .unwrap();
        }
        assert!(p.settle(Duration::from_secs(1)));
        assert_eq!(drain_cq(&mut p.ep[0], a.cq).len(), 3);
        assert_eq!(drain_cq(&mut p.ep[1], b.cq).len(), 5);
    }
}
