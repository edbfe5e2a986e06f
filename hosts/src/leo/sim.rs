//! The KVS experiment of §V on the queue model: requests of the application's types arrive as
//! a Poisson stream; the chosen path's devices and links serve them as FIFO backlogs of the
//! testbed's *true* speeds (which may change mid-run: a link that slows down); the requester
//! adds a 3–9 µs network delay (§V-A) and feeds each completion's JCTs back to the policy in
//! completion order. The LP policy gets the recorded next `k` requests and the true backlogs,
//! as the paper's offline optimum does.

use super::app::AppSpec;
use super::error::LeoError;
use super::hw::{HardwareModel, LinkProbe, ModelledLink, ModelledProbe};
use super::lp;
use super::queues::{demands, Demand, Queues};
use super::select::{Policy, Selector};
use crate::acuerdo::ycsb::SplitMix;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The testbed's links as they really are (what profiling measures).
#[derive(Debug, Clone)]
pub struct Testbed(pub ModelledProbe);

impl Testbed {
    /// An off-path accelerator testbed like the paper's F-NIC: a PCIe Gen3-like CPU link
    /// (0.5 µs, 12 GB/s, 20 Mmsg/s) and the accelerator's on-board link (0.3 µs, 12 GB/s, 25 Mmsg/s);
    /// for the on-path model, the wire into the accelerator and its AXI link to the NIC.
    pub fn f_nic() -> Testbed {
        let l = |latency_ns, per_msg_ns| ModelledLink {
            latency_ns,
            bytes_per_ns: 12.0,
            per_msg_ns,
        };
        Testbed(ModelledProbe(vec![
            ("pcie".into(), l(500.0, 50.0)),
            ("acc-link".into(), l(300.0, 40.0)),
            ("wire".into(), l(100.0, 10.0)),
            ("axi".into(), l(200.0, 20.0)),
        ]))
    }
    /// The same testbed with `link`'s per-message cost and bandwidth `factor` times worse.
    pub fn slowed(&self, link: &str, factor: f64) -> Testbed {
        let mut t = self.clone();
        for (n, m) in &mut t.0 .0 {
            if n == link {
                m.per_msg_ns *= factor;
                m.bytes_per_ns /= factor;
                m.latency_ns *= factor;
            }
        }
        t
    }
    /// `spec`'s hardware with the links as this testbed has them now (a fresh profile).
    pub fn truth(&self, hw: &HardwareModel) -> HardwareModel {
        let mut h = hw.clone();
        let mut probe: Box<dyn LinkProbe> = Box::new(self.0.clone());
        h.profile(probe.as_mut());
        h
    }
}

/// The run's parameters.
#[derive(Debug, Clone)]
pub struct Run {
    /// Requests per second offered.
    pub rate: f64,
    /// Requests.
    pub count: usize,
    /// Seed of arrivals, types and delays.
    pub seed: u64,
    /// LP horizon.
    pub k: usize,
    /// From request `.0` on, the testbed is `.1`.
    pub change: Option<(usize, Testbed)>,
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// End-to-end latency of each request, ns, in arrival order.
    pub e2e_ns: Vec<f64>,
    /// The candidate each request took.
    pub picks: Vec<usize>,
    /// How many completions the policy was told of (each request exactly once).
    pub completions: usize,
}

struct Truth {
    demands: Vec<Vec<Demand>>,
    traverse: Vec<Vec<f64>>,
}

fn truth(spec: &AppSpec, tb: &Testbed) -> Result<Truth, LeoError> {
    let mut s = spec.clone();
    s.hw = tb.truth(&spec.hw);
    Ok(Truth {
        demands: demands(&s)?,
        traverse: s
            .costs()?
            .iter()
            .map(|c| c.iter().map(|c| c.traverse_ns).collect())
            .collect(),
    })
}

/// Runs `policy` over `spec` (profiled) on testbed `tb`.
pub fn run(spec: &AppSpec, tb: &Testbed, policy: Policy, run: &Run) -> Result<Outcome, LeoError> {
    let mut sel = Selector::new(spec, policy)?;
    let mut t = truth(spec, tb)?;
    let est_demands = demands(spec)?;
    let (types, gaps) = trace(spec, run);
    let mut rng = SplitMix(run.seed ^ 0x5eed);
    let mut q = Queues::new(spec.hw.devices.len() + spec.hw.links.len());
    let mut pending = BinaryHeap::new();
    let mut out = Outcome::default();
    let mut now = 0.0;
    for n in 0..types.len() {
        if let Some((at, tb2)) = &run.change {
            if *at == n {
                t = truth(spec, tb2)?;
            }
        }
        while let Some(Reverse((done, r, i, intra, e2e))) = pending.peek().copied() {
            if done > now as u64 {
                break;
            }
            pending.pop();
            sel.complete(r, i, f64::from_bits(intra), f64::from_bits(e2e));
            out.completions += 1;
        }
        let r = types[n];
        let i = if policy == Policy::Lp {
            let end = (n + run.k.max(1)).min(types.len());
            let h: Vec<lp::Step> = (n..end)
                .map(|m| lp::Step {
                    request: types[m],
                    dt_ns: gaps[m],
                })
                .collect();
            let i = lp::solve(sel.costs(), &est_demands, &q, &h)?.0[0];
            sel.sent(r, i);
            i
        } else {
            sel.dispatch(r)
        };
        let d = &t.demands[r][i];
        let intra = q.wait(d) + t.traverse[r][i];
        q.admit(d);
        let e2e = intra + 3_000.0 + 6_000.0 * rng.next_f64();
        pending.push(Reverse((
            (now + e2e) as u64,
            r,
            i,
            intra.to_bits(),
            e2e.to_bits(),
        )));
        out.e2e_ns.push(e2e);
        out.picks.push(i);
        q.advance(gaps[n]);
        now += gaps[n];
    }
    out.completions += pending.len();
    Ok(out)
}

/// The request types and inter-arrival gaps (ns) of a run.
pub fn trace(spec: &AppSpec, run: &Run) -> (Vec<usize>, Vec<f64>) {
    let mut rng = SplitMix(run.seed);
    let mean = 1e9 / run.rate;
    (0..run.count)
        .map(|_| {
            let mut u = rng.next_f64();
            let r = spec
                .requests
                .iter()
                .position(|t| {
                    u -= t.share;
                    u < 0.0
                })
                .unwrap_or(spec.requests.len() - 1);
            (r, -mean * (1.0 - rng.next_f64()).ln())
        })
        .unzip()
}

/// The median of `v` (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leo::app::tests::KVS;

    fn kvs() -> (AppSpec, Testbed) {
        let tb = Testbed::f_nic();
        let mut spec = AppSpec::from_yaml(KVS).unwrap();
        spec.hw = tb.truth(&spec.hw);
        (spec, tb)
    }

    fn run_of(rate: f64, change: Option<(usize, Testbed)>) -> Run {
        Run {
            rate,
            count: 4000,
            seed: 7,
            k: 3,
            change,
        }
    }

    #[test]
    fn every_request_completes_once_and_leo_uses_both_paths_under_load() {
        let (spec, tb) = kvs();
        let r = run_of(8e6, None);
        let leo = run(&spec, &tb, Policy::Leo, &r).unwrap();
        let acc = run(&spec, &tb, Policy::Acc, &r).unwrap();
        let cpu = run(&spec, &tb, Policy::Cpu, &r).unwrap();
        for o in [&leo, &acc, &cpu] {
            assert_eq!((o.completions, o.e2e_ns.len()), (r.count, r.count));
        }
        let get = spec.request("GET").unwrap();
        let (types, _) = trace(&spec, &r);
        let on_cpu = types
            .iter()
            .zip(&leo.picks)
            .filter(|&(&t, &i)| t == get && spec.requests[get].paths[i] == 0)
            .count();
        assert!(on_cpu > 100, "LEO sent {on_cpu} GETs to the CPU");
        assert!(median(&leo.e2e_ns) < median(&acc.e2e_ns));
        assert!(median(&leo.e2e_ns) < median(&cpu.e2e_ns));
    }

    #[test]
    fn heuristic_moves_traffic_off_a_link_that_slows_down() {
        let (spec, tb) = kvs();
        let slow = tb.slowed("acc-link", 8.0);
        let r = run_of(2e6, Some((2000, slow)));
        let get = spec.request("GET").unwrap();
        let (types, _) = trace(&spec, &r);
        let acc_share = |o: &Outcome, from: usize, to: usize| {
            let gets = (from..to).filter(|&n| types[n] == get);
            let n = gets.clone().count() as f64;
            gets.filter(|&n| spec.requests[get].paths[o.picks[n]] == 1)
                .count() as f64
                / n
        };
        let leo = run(&spec, &tb, Policy::Leo, &r).unwrap();
        let acc = run(&spec, &tb, Policy::Acc, &r).unwrap();
        let (before, after) = (acc_share(&leo, 0, 2000), acc_share(&leo, 2500, 4000));
        println!("LEO's accelerator share: {before:.2} before, {after:.2} after");
        assert!(before > 0.6 && after < before * 0.9, "{before} {after}");
        assert!(median(&leo.e2e_ns[2500..]) < median(&acc.e2e_ns[2500..]));
    }

    #[test]
    fn leo_beats_both_greedy_policies_under_load_and_stays_near_the_lp() {
        let (spec, tb) = kvs();
        let r = run_of(7e6, None);
        let m = |p| median(&run(&spec, &tb, p, &r).unwrap().e2e_ns);
        let (leo, reset) = (m(Policy::Leo), m(Policy::LeoReset));
        let (intra, e2e) = (m(Policy::GreedyIntra), m(Policy::GreedyE2e));
        assert!(leo * 1.5 < intra.min(e2e), "leo {leo} greedy {intra} {e2e}");
        assert!(leo * 1.5 < reset, "leo {leo} leo-reset {reset}");
        let short = Run { count: 400, ..r };
        let leo = median(&run(&spec, &tb, Policy::Leo, &short).unwrap().e2e_ns);
        let lp = median(&run(&spec, &tb, Policy::Lp, &short).unwrap().e2e_ns);
        assert!(leo < lp * 1.2, "leo {leo} lp {lp}");
    }

    #[test]
    fn a_second_application_runs_unchanged() {
        let tb = Testbed::f_nic();
        let mut spec = AppSpec::from_yaml(include_str!("../../../deploy/leo/ebs.yaml")).unwrap();
        spec.hw = tb.truth(&spec.hw);
        let r = Run {
            count: 2000,
            ..run_of(3e6, None)
        };
        let leo = run(&spec, &tb, Policy::Leo, &r).unwrap();
        let acc = run(&spec, &tb, Policy::Acc, &r).unwrap();
        assert_eq!(leo.completions, r.count);
        assert!(leo.picks.contains(&1) && leo.picks.contains(&0));
        assert!(median(&leo.e2e_ns) <= median(&acc.e2e_ns));
    }

    #[test]
    fn lp_policy_runs_and_beats_fixed_paths() {
        let (spec, tb) = kvs();
        let r = Run {
            count: 300,
            ..run_of(8e6, None)
        };
        let lp = run(&spec, &tb, Policy::Lp, &r).unwrap();
        let acc = run(&spec, &tb, Policy::Acc, &r).unwrap();
        assert_eq!(lp.completions, r.count);
        assert!(median(&lp.e2e_ns) <= median(&acc.e2e_ns));
    }
}
