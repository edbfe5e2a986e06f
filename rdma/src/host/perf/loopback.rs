//! Both sides of a benchmark in one process over an in-memory link (`pisa rdma ...
//! --loopback`): the server on a second thread, the client on the caller's, wall time.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use dataplane::mem::pair;
use dataplane::WallClock;

use super::{run_client, run_server, PerfConfig, PerfError, PerfReport};
use crate::host::Host;
use crate::verbs::{Endpoint, EndpointConfig};

/// Addresses of the loopback pair: client 10.255.0.1, server 10.255.0.2.
pub const LOOPBACK_CLIENT: Ipv4Addr = Ipv4Addr::new(10, 255, 0, 1);
/// See [`LOOPBACK_CLIENT`].
pub const LOOPBACK_SERVER: Ipv4Addr = Ipv4Addr::new(10, 255, 0, 2);

/// Runs `cfg` between two endpoints over an in-memory link. `tune` adjusts both endpoint
/// configurations (MTU, ICRC checking) before they are created. Returns the client's and
/// the server's reports.
pub fn run_loopback(
    cfg: &PerfConfig,
    tune: impl Fn(&mut EndpointConfig),
) -> Result<(PerfReport, Option<PerfReport>), PerfError> {
    cfg.validate()?;
    let (a, b) = pair("rdma-client", "rdma-server");
    let mut ca = EndpointConfig::new([2, 0, 0, 0xff, 0, 1], LOOPBACK_CLIENT);
    let mut cb = EndpointConfig::new([2, 0, 0, 0xff, 0, 2], LOOPBACK_SERVER);
    tune(&mut ca);
    tune(&mut cb);
    let mut client = Host::new(Endpoint::new(ca), Box::new(a));
    let mut server = Host::new(Endpoint::new(cb), Box::new(b));
    let clock = WallClock::new();
    let server_clock = clock.clone();
    let server_cfg = cfg.clone();
    let handle = std::thread::Builder::new()
        .name("rdma-server".into())
        .spawn(move || {
            let r = run_server(
                &mut server,
                &server_clock,
                &server_cfg,
                Some(Duration::from_secs(30)),
            );
            // Keep the link up until the client has seen the disconnect answered.
            let until = dataplane::Clock::now(&server_clock) + dataplane::Nanos::from_millis(50);
            let _ = server.run_until(&server_clock, until, |_| false);
            r
        })
        .map_err(|e| PerfError::Config(format!("cannot start the server thread: {e}")))?;
    let client_result = run_client(&mut client, &clock, IpAddr::V4(LOOPBACK_SERVER), cfg);
    let server_result = handle
        .join()
        .map_err(|_| PerfError::Protocol("the server thread panicked".into()))?;
    let c = client_result?;
    let s = server_result?;
    Ok((c, s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::perf::PerfTest;

    fn small(test: PerfTest, size: usize, n: u64) -> PerfConfig {
        let mut c = PerfConfig::new(test);
        c.size = size;
        c.iterations = n;
        c.tx_depth = 16;
        c
    }

    #[test]
    fn every_test_completes_over_a_memory_link() {
        for test in PerfTest::ALL {
            let size = if test.is_latency() { 64 } else { 4096 };
            let (c, s) = run_loopback(&small(test, size, 200), |_| {})
                .unwrap_or_else(|e| panic!("{test}: {e}"));
            assert_eq!(c.iterations, 200, "{test}");
            assert_eq!(c.size, size);
            assert!(
                c.bw_avg_gbps > 0.0 && c.bw_peak_gbps >= c.bw_avg_gbps,
                "{test} {c:?}"
            );
            assert!(c.msg_rate_mpps > 0.0);
            assert_eq!(c.latency.is_some(), test.is_latency(), "{test}");
            if let Some(l) = c.latency {
                assert!(l.min_ns <= l.median_ns && l.median_ns <= l.p99_ns && l.p99_ns <= l.max_ns);
            }
            match test {
                PerfTest::SendBw => assert_eq!(s.map(|r| r.iterations), Some(200)),
                _ => assert!(s.is_none(), "{test}"),
            }
        }
    }

    #[test]
    fn duration_mode_runs_for_about_that_long() {
        let mut cfg = small(PerfTest::WriteBw, 1024, 0);
        cfg.duration = Some(Duration::from_millis(200));
        let (c, _) = run_loopback(&cfg, |_| {}).unwrap();
        assert!(c.iterations > 0);
        assert!(c.elapsed_ns >= 200_000_000, "{}", c.elapsed_ns);
    }

    #[test]
    fn mismatched_mtu_and_no_icrc_check_still_work() {
        let (c, _) = run_loopback(&small(PerfTest::ReadBw, 10_000, 50), |e| {
            e.cm.path_mtu = crate::verbs::Mtu::M256;
            e.icrc_check = false;
        })
        .unwrap();
        assert_eq!(c.iterations, 50);
    }

    #[test]
    fn bad_options_are_refused() {
        let e = run_loopback(&small(PerfTest::WriteBw, 0, 10), |_| {}).unwrap_err();
        assert!(matches!(e, PerfError::Config(_)), "{e}");
        let mut c = small(PerfTest::WriteBw, 10, 10);
        c.tx_depth = 0;
        assert!(run_loopback(&c, |_| {}).is_err());
    }
}
