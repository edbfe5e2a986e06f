//! The client side of a benchmark: connect through RDMA CM, run the test, disconnect.

use std::net::IpAddr;
use std::time::Duration;

use dataplane::{Clock, Nanos};

use super::proto::{read_reject, Hello};
use super::pump::{drain_cq, pump, OnDisconnect, Step};
use super::summary::Meter;
use super::{PerfConfig, PerfError, PerfReport, PerfTest};
use crate::host::{instant, Host};
use crate::verbs::{
    AccessFlags, CmEvent, CqHandle, Endpoint, MrInfo, QpInitAttr, QpType, RecvWr, SendOp, SendWr,
    Sge,
};

/// Receives kept posted by a SEND latency client.
const LAT_RECVS: usize = 16;
/// How long the client waits for the CM to establish the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the client waits for the disconnect handshake.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The resources of one side: its QP, CQ and a buffer of two halves (receive area at
/// offset 0, which the peer targets; send area at offset `size`).
pub(crate) struct Resources {
    pub qpn: u32,
    pub cq: CqHandle,
    pub mr: MrInfo,
    pub size: usize,
}

impl Resources {
    pub(crate) fn new(
        ep: &mut Endpoint,
        size: usize,
        send_depth: usize,
        recv_depth: usize,
    ) -> Result<Resources, PerfError> {
        let pd = ep.alloc_pd();
        let cq = ep.create_cq(2 * (send_depth + recv_depth) + 64);
        let mr = ep.reg_mr(pd, 2 * size, AccessFlags::ALL)?;
        let qpn = ep.create_qp(QpInitAttr {
            pd,
            qp_type: QpType::Rc,
            send_cq: cq,
            recv_cq: cq,
            max_send_wr: send_depth,
            max_recv_wr: recv_depth,
        })?;
        Ok(Resources { qpn, cq, mr, size })
    }

    /// The receive area (target of the peer's WRITEs, READ destination, SEND landing).
    pub(crate) fn recv_sge(&self) -> Sge {
        Sge {
            addr: self.mr.addr,
            length: self.size as u32,
            lkey: self.mr.lkey,
        }
    }

    /// The send area.
    pub(crate) fn send_sge(&self, len: usize) -> Sge {
        Sge {
            addr: self.mr.addr + self.size as u64,
            length: len.min(self.size) as u32,
            lkey: self.mr.lkey,
        }
    }

    pub(crate) fn hello(&self, test: PerfTest) -> Hello {
        Hello {
            test,
            size: self.size as u32,
            addr: self.mr.addr,
            rkey: self.mr.rkey,
        }
    }

    /// The last byte of the receive area (the ping-pong sequence byte).
    pub(crate) fn recv_last(&self, ep: &Endpoint) -> u8 {
        ep.mr_bytes(self.mr.lkey)
            .ok()
            .and_then(|b| b.get(self.size - 1).copied())
            .unwrap_or(0)
    }

    /// Sets the last byte of the send area.
    pub(crate) fn set_send_last(&self, ep: &mut Endpoint, v: u8) {
        if let Ok(b) = ep.mr_bytes_mut(self.mr.lkey) {
            if let Some(x) = b.get_mut(2 * self.size - 1) {
                *x = v;
            }
        }
    }

    pub(crate) fn post_recv(&self, ep: &mut Endpoint, wr_id: u64) -> Result<(), PerfError> {
        ep.post_recv(
            self.qpn,
            RecvWr {
                wr_id,
                sg_list: vec![self.recv_sge()],
            },
        )?;
        Ok(())
    }
}

/// Runs the client side of `cfg.test` against the server at `server`; returns what this
/// side measured.
pub fn run_client(
    host: &mut Host,
    clock: &dyn Clock,
    server: IpAddr,
    cfg: &PerfConfig,
) -> Result<PerfReport, PerfError> {
    cfg.validate()?;
    let send_depth = if cfg.test.is_latency() {
        4
    } else {
        cfg.tx_depth
    };
    let recv_depth = if cfg.test == PerfTest::SendLat {
        LAT_RECVS
    } else {
        1
    };
    let res = Resources::new(host.endpoint_mut(), cfg.size, send_depth, recv_depth)?;
    let hello = res.hello(cfg.test).to_bytes();
    let now = clock.now();
    let conn = host
        .endpoint_mut()
        .connect(instant(now), res.qpn, server, cfg.cm_port, &hello)?;
    let remote = establish(host, clock, server, now + Nanos::from(CONNECT_TIMEOUT))?;
    if remote.test != cfg.test || remote.size as usize != cfg.size {
        return Err(PerfError::Protocol(format!(
            "server answered for {} with {} bytes, we asked for {} with {}",
            remote.test, remote.size, cfg.test, cfg.size
        )));
    }
    let report = match cfg.test {
        PerfTest::WriteBw | PerfTest::ReadBw | PerfTest::SendBw => {
            bandwidth(host, clock, cfg, &res, remote)?
        }
        PerfTest::WriteLat => write_ping_pong(host, clock, cfg, &res, remote)?,
        PerfTest::ReadLat => read_latency(host, clock, cfg, &res, remote)?,
        PerfTest::SendLat => send_ping_pong(host, clock, cfg, &res)?,
    };
    let now = clock.now();
    host.endpoint_mut().disconnect(instant(now), conn)?;
    let mut gone = false;
    // Best effort: the report stands even if the DREP never comes.
    let _ = host.run_until(clock, now + Nanos::from(DISCONNECT_TIMEOUT), |ep| {
        while let Some(ev) = ep.poll_cm_event() {
            gone |= matches!(ev, CmEvent::Disconnected { .. });
        }
        gone
    });
    Ok(report)
}

fn establish(
    host: &mut Host,
    clock: &dyn Clock,
    server: IpAddr,
    deadline: Nanos,
) -> Result<Hello, PerfError> {
    let mut outcome: Option<Result<Hello, PerfError>> = None;
    let r = host.run_until(clock, deadline, |ep| {
        while let Some(ev) = ep.poll_cm_event() {
            match ev {
                CmEvent::Established { private_data, .. } => {
                    outcome = Some(Hello::parse(&private_data));
                }
                CmEvent::Rejected {
                    reason,
                    private_data,
                    ..
                } => {
                    outcome = Some(Err(PerfError::Rejected {
                        reason,
                        detail: read_reject(&private_data),
                    }))
                }
                CmEvent::Unreachable { .. } => outcome = Some(Err(PerfError::Unreachable(server))),
                CmEvent::Disconnected { .. } => outcome = Some(Err(PerfError::PeerGone)),
                CmEvent::ConnectRequest { .. } => {}
            }
        }
        outcome.is_some()
    });
    match (r, outcome) {
        (_, Some(o)) => o,
        (Err(crate::host::HostError::Deadline { .. }), None) => Err(PerfError::Unreachable(server)),
        (Err(e), None) => Err(e.into()),
        (Ok(()), None) => Err(PerfError::Unreachable(server)),
    }
}

/// When the test stops posting: after `iterations`, or after the duration.
struct Stop {
    target: u64,
    end: Option<Nanos>,
}

impl Stop {
    fn new(cfg: &PerfConfig, start: Nanos) -> Stop {
        match cfg.duration {
            Some(d) => Stop {
                target: u64::MAX,
                end: Some(start + Nanos::from(d)),
            },
            None => Stop {
                target: cfg.iterations,
                end: None,
            },
        }
    }

    fn posting_over(&self, posted: u64, now: Nanos) -> bool {
        posted >= self.target || self.end.is_some_and(|e| now >= e)
    }
}

fn bandwidth(
    host: &mut Host,
    clock: &dyn Clock,
    cfg: &PerfConfig,
    res: &Resources,
    remote: Hello,
) -> Result<PerfReport, PerfError> {
    let start = clock.now();
    let stop = Stop::new(cfg, start);
    let slice = (cfg.iterations / 100).clamp(cfg.tx_depth as u64, 1 << 20);
    let mut meter = Meter::new(start.as_nanos(), slice);
    let (mut posted, mut completed) = (0u64, 0u64);
    let depth = cfg.tx_depth as u64;
    let op = match cfg.test {
        PerfTest::ReadBw => SendOp::Read {
            remote_addr: remote.addr,
            rkey: remote.rkey,
        },
        PerfTest::SendBw => SendOp::Send,
        _ => SendOp::Write {
            remote_addr: remote.addr,
            rkey: remote.rkey,
        },
    };
    let local = if cfg.test == PerfTest::ReadBw {
        res.recv_sge()
    } else {
        res.send_sge(cfg.size)
    };
    pump(
        host,
        clock,
        cfg.stall_timeout,
        OnDisconnect::Fail,
        |ep, now| {
            let n = drain_cq(ep, res.cq)?.len() as u64;
            if n > 0 {
                completed += n;
                meter.complete(now.as_nanos(), n);
            }
            let over = stop.posting_over(posted, now);
            if over && completed >= posted {
                return Ok(Step::Done);
            }
            let before = posted;
            while !stop.posting_over(posted, now) && posted - completed < depth {
                ep.post_send(res.qpn, SendWr::new(posted, op, local))?;
                posted += 1;
            }
            Ok(Step::Continue(n > 0 || posted > before))
        },
    )?;
    Ok(meter.report(cfg.test, cfg.size, host.endpoint().stats()))
}

fn write_ping_pong(
    host: &mut Host,
    clock: &dyn Clock,
    cfg: &PerfConfig,
    res: &Resources,
    remote: Hello,
) -> Result<PerfReport, PerfError> {
    let start = clock.now();
    let stop = Stop::new(cfg, start);
    let mut meter = Meter::new(start.as_nanos(), 1);
    let mut sent = 0u64;
    let mut waiting: Option<(u8, Nanos)> = None;
    let op = SendOp::Write {
        remote_addr: remote.addr,
        rkey: remote.rkey,
    };
    pump(
        host,
        clock,
        cfg.stall_timeout,
        OnDisconnect::Fail,
        |ep, now| {
            let drained = !drain_cq(ep, res.cq)?.is_empty();
            if let Some((seq, t0)) = waiting {
                if res.recv_last(ep) != seq {
                    return Ok(Step::Continue(drained));
                }
                meter.latency(now.saturating_sub(t0).as_nanos() / 2);
                meter.complete(now.as_nanos(), 1);
                waiting = None;
            }
            if stop.posting_over(sent, now) {
                return Ok(Step::Done);
            }
            let seq = (sent % 255) as u8 + 1;
            res.set_send_last(ep, seq);
            ep.post_send(res.qpn, SendWr::new(sent, op, res.send_sge(cfg.size)))?;
            sent += 1;
            waiting = Some((seq, clock.now()));
            Ok(Step::Continue(true))
        },
    )?;
    Ok(meter.report(cfg.test, cfg.size, host.endpoint().stats()))
}

fn read_latency(
    host: &mut Host,
    clock: &dyn Clock,
    cfg: &PerfConfig,
    res: &Resources,
    remote: Hello,
) -> Result<PerfReport, PerfError> {
    let start = clock.now();
    let stop = Stop::new(cfg, start);
    let mut meter = Meter::new(start.as_nanos(), 1);
    let mut posted = 0u64;
    let mut waiting: Option<Nanos> = None;
    let op = SendOp::Read {
        remote_addr: remote.addr,
        rkey: remote.rkey,
    };
    pump(
        host,
        clock,
        cfg.stall_timeout,
        OnDisconnect::Fail,
        |ep, now| {
            let done = !drain_cq(ep, res.cq)?.is_empty();
            if let Some(t0) = waiting {
                if !done {
                    return Ok(Step::Continue(false));
                }
                meter.latency(now.saturating_sub(t0).as_nanos());
                meter.complete(now.as_nanos(), 1);
                waiting = None;
            }
            if stop.posting_over(posted, now) {
                return Ok(Step::Done);
            }
            ep.post_send(res.qpn, SendWr::new(posted, op, res.recv_sge()))?;
            posted += 1;
            waiting = Some(clock.now());
            Ok(Step::Continue(true))
        },
    )?;
    Ok(meter.report(cfg.test, cfg.size, host.endpoint().stats()))
}

fn send_ping_pong(
    host: &mut Host,
    clock: &dyn Clock,
    cfg: &PerfConfig,
    res: &Resources,
) -> Result<PerfReport, PerfError> {
    for i in 0..LAT_RECVS as u64 {
        res.post_recv(host.endpoint_mut(), i)?;
    }
    let start = clock.now();
    let stop = Stop::new(cfg, start);
    let mut meter = Meter::new(start.as_nanos(), 1);
    let mut sent = 0u64;
    let mut waiting: Option<Nanos> = None;
    let mut next_recv = LAT_RECVS as u64;
    pump(
        host,
        clock,
        cfg.stall_timeout,
        OnDisconnect::Fail,
        |ep, now| {
            let wcs = drain_cq(ep, res.cq)?;
            let progressed = !wcs.is_empty();
            let replies = wcs
                .iter()
                .filter(|w| w.opcode == crate::verbs::WcOpcode::Recv)
                .count();
            for _ in 0..replies {
                res.post_recv(ep, next_recv)?;
                next_recv += 1;
            }
            if let Some(t0) = waiting {
                if replies == 0 {
                    return Ok(Step::Continue(progressed));
                }
                meter.latency(now.saturating_sub(t0).as_nanos() / 2);
                meter.complete(now.as_nanos(), 1);
                waiting = None;
            }
            if stop.posting_over(sent, now) {
                return Ok(Step::Done);
            }
            ep.post_send(
                res.qpn,
                SendWr::new(sent, SendOp::Send, res.send_sge(cfg.size)),
            )?;
            sent += 1;
            waiting = Some(clock.now());
            Ok(Step::Continue(true))
        },
    )?;
    Ok(meter.report(cfg.test, cfg.size, host.endpoint().stats()))
}
