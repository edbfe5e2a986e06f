//! The server side of a benchmark: wait for one connection request for the test, accept it
//! with a buffer of the requested size, serve (keep receives posted, answer ping-pongs) until
//! the client disconnects.

use std::time::Duration;

use dataplane::{Clock, Nanos};

use super::client::Resources;
use super::proto::{reject_reason, Hello};
use super::pump::{drain_cq, pump, OnDisconnect, Step};
use super::summary::Meter;
use super::{PerfConfig, PerfError, PerfReport, PerfTest, MAX_SIZE};
use crate::host::{instant, Host};
use crate::verbs::{CmEvent, SendOp, SendWr, WcOpcode};

/// Receives the server keeps posted for SEND tests.
const RX_DEPTH: usize = 512;

/// Runs the server side: listens on `cfg.cm_port`, serves one client, returns when it
/// disconnects. `accept_timeout`: give up when no client comes in that time (`None`:
/// wait forever, like perftest). Returns the receive-side measurement for `send-bw`.
pub fn run_server(
    host: &mut Host,
    clock: &dyn Clock,
    cfg: &PerfConfig,
    accept_timeout: Option<Duration>,
) -> Result<Option<PerfReport>, PerfError> {
    host.endpoint_mut().listen(cfg.cm_port)?;
    let deadline = accept_timeout.map_or(Nanos::MAX, |t| clock.now() + Nanos::from(t));
    let mut request = None;
    host.run_until(clock, deadline, |ep| {
        while let Some(ev) = ep.poll_cm_event() {
            if let CmEvent::ConnectRequest {
                conn, private_data, ..
            } = ev
            {
                request = Some((conn, Hello::parse(&private_data)));
            }
        }
        request.is_some()
    })?;
    let Some((conn, hello)) = request else {
        return Err(PerfError::Protocol("no connection request".into()));
    };
    let now = instant(clock.now());
    let hello = match hello {
        Ok(h) if h.test != cfg.test => {
            let why = format!("server runs {}, client asked for {}", cfg.test, h.test);
            host.endpoint_mut()
                .reject(now, conn, &reject_reason(&why))?;
            flush(host, clock);
            return Err(PerfError::Protocol(why));
        }
        Ok(h) if h.size == 0 || h.size as usize > MAX_SIZE => {
            let why = format!("message size {} out of range", h.size);
            host.endpoint_mut()
                .reject(now, conn, &reject_reason(&why))?;
            flush(host, clock);
            return Err(PerfError::Protocol(why));
        }
        Ok(h) => h,
        Err(e) => {
            host.endpoint_mut()
                .reject(now, conn, &reject_reason("not a pisa rdma client"))?;
            flush(host, clock);
            return Err(e);
        }
    };
    let size = hello.size as usize;
    let send_test = matches!(cfg.test, PerfTest::SendBw | PerfTest::SendLat);
    let recv_depth = if send_test { RX_DEPTH } else { 1 };
    let res = Resources::new(host.endpoint_mut(), size, 16, recv_depth)?;
    let ep = host.endpoint_mut();
    ep.accept(now, conn, res.qpn, &res.hello(cfg.test).to_bytes())?;
    if send_test {
        for i in 0..RX_DEPTH as u64 {
            res.post_recv(ep, i)?;
        }
    }
    // The server never gives up on its own while the client is connected and sending;
    // it stops after a long silence so a vanished client cannot hang it.
    let stall = cfg.stall_timeout.max(Duration::from_secs(10));
    // Started at the first receive, so waiting for the client does not count.
    let mut meter: Option<Meter> = None;
    let mut next_recv = RX_DEPTH as u64;
    let mut expected: u8 = 1;
    let mut replies = 0u64;
    let mut last_rx = 0u64;
    let peer_buf = SendOp::Write {
        remote_addr: hello.addr,
        rkey: hello.rkey,
    };
    pump(host, clock, stall, OnDisconnect::Finish, |ep, now| {
        let rx = ep.stats().rx_frames;
        let mut progressed = rx != last_rx;
        last_rx = rx;
        let wcs = drain_cq(ep, res.cq)?;
        for wc in wcs.iter().filter(|w| w.opcode == WcOpcode::Recv) {
            meter
                .get_or_insert_with(|| Meter::new(now.as_nanos(), 64))
                .complete(now.as_nanos(), 1);
            res.post_recv(ep, next_recv)?;
            next_recv += 1;
            if cfg.test == PerfTest::SendLat {
                let len = wc.byte_len as usize;
                ep.post_send(
                    res.qpn,
                    SendWr::new(replies, SendOp::Send, res.send_sge(len)),
                )?;
                replies += 1;
            }
        }
        if cfg.test == PerfTest::WriteLat && res.recv_last(ep) == expected {
            res.set_send_last(ep, expected);
            ep.post_send(res.qpn, SendWr::new(replies, peer_buf, res.send_sge(size)))?;
            replies += 1;
            expected = expected % 255 + 1;
            progressed = true;
        }
        Ok(Step::Continue(progressed || !wcs.is_empty()))
    })?;
    Ok(meter
        .filter(|m| cfg.test == PerfTest::SendBw && m.count() > 1)
        .map(|m| m.report(cfg.test, size, host.endpoint().stats())))
}

/// Gives a reject a moment to go out.
fn flush(host: &mut Host, clock: &dyn Clock) {
    let until = clock.now() + Nanos::from_millis(20);
    let _ = host.run_until(clock, until, |_| false);
}
