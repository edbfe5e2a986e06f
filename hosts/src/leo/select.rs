//! Online path selection (§III-B2) and the baselines of §V-C. LEO's heuristic: offline, the
//! base traverse time `T(p, r)` and the communication toll `Q_toll(p, r)` of every
//! request-path pair; online, an estimate `k̂_p` of the requests that will meet the queue a new
//! request adds to path `p`, and the choice `argmin_p k̂_p·Q_toll(p, r) + T(p, r)`.
//!
//! Two estimators of `k̂_p`, both driven by the monitored intra-host JCTs of Fig. 6:
//! - [`Policy::Leo`]: the path's requests in flight — counted when one is dispatched on the
//!   path, released when its completion (which carries its JCTs) comes back, never reset as a
//!   whole by one completion. Every request sent on `p` and not yet back will meet the queue a
//!   new request adds, so the count is the sender's view at decision time of "the requests
//!   that will experience the queue latency caused by the current request".
//! - [`Policy::LeoReset`]: the estimation rule as §III-B2's text words it — one more when a
//!   completion's intra-host JCT exceeds `T`, back to 0 otherwise. It changes only at
//!   completions, a 3–9 µs round trip after the decisions that built the queue, and one
//!   request that slipped through an idle moment zeroes it, so it swings between paths much as
//!   the greedy policies do (docs/leo.md, Fig. 13).
//!
//! Greedy-Intra and Greedy-E2E pick the path whose last intra-host / end-to-end JCT was lowest;
//! CPU-only and accelerator-only use fixed paths.

use super::app::AppSpec;
use super::error::LeoError;
use super::path::{PathCost, PathKind};
use std::fmt;
use std::str::FromStr;

/// A path-selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// LEO's heuristic with the communication toll, `k̂` = requests in flight on the path.
    Leo,
    /// LEO's heuristic with `k̂` counting consecutive slow completions, reset by a fast one.
    LeoReset,
    /// Always the CPU path.
    Cpu,
    /// The accelerator path where the request type has one.
    Acc,
    /// Lowest last end-to-end JCT.
    GreedyE2e,
    /// Lowest last intra-host JCT.
    GreedyIntra,
    /// The k-step LP (run by the caller, who knows the horizon; see [`super::lp`]).
    Lp,
}

impl Policy {
    /// All policies, in the bench's order.
    pub const ALL: [Policy; 7] = [
        Policy::Leo,
        Policy::LeoReset,
        Policy::Cpu,
        Policy::Acc,
        Policy::GreedyE2e,
        Policy::GreedyIntra,
        Policy::Lp,
    ];
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Leo => "leo",
            Policy::LeoReset => "leo-reset",
            Policy::Cpu => "cpu",
            Policy::Acc => "acc",
            Policy::GreedyE2e => "greedy-e2e",
            Policy::GreedyIntra => "greedy-intra",
            Policy::Lp => "lp",
        })
    }
}

impl FromStr for Policy {
    type Err = LeoError;
    fn from_str(s: &str) -> Result<Policy, LeoError> {
        Policy::ALL
            .into_iter()
            .find(|p| p.to_string() == s)
            .ok_or_else(|| {
                LeoError::invalid(
                    "--policy",
                    format!(
                        "`{s}`: expected leo, leo-reset, cpu, acc, greedy-e2e, greedy-intra or lp"
                    ),
                )
            })
    }
}

/// The online selector of one policy (all but [`Policy::Lp`]).
#[derive(Debug, Clone)]
pub struct Selector {
    policy: Policy,
    costs: Vec<Vec<PathCost>>,
    kinds: Vec<Vec<PathKind>>,
    paths: Vec<Vec<usize>>,
    k_hat: Vec<u32>,
    in_flight: Vec<u32>,
    last_intra: Vec<Vec<f64>>,
    last_e2e: Vec<Vec<f64>>,
}

impl Selector {
    /// A selector for `spec` (profiled) under `policy`.
    pub fn new(spec: &AppSpec, policy: Policy) -> Result<Selector, LeoError> {
        let costs = spec.costs()?;
        let base: Vec<Vec<f64>> = costs
            .iter()
            .map(|c| c.iter().map(|c| c.traverse_ns).collect())
            .collect();
        Ok(Selector {
            policy,
            kinds: spec
                .requests
                .iter()
                .map(|r| r.paths.iter().map(|&p| spec.paths[p].kind).collect())
                .collect(),
            paths: spec.requests.iter().map(|r| r.paths.clone()).collect(),
            k_hat: vec![0; spec.paths.len()],
            in_flight: vec![0; spec.paths.len()],
            last_intra: base.clone(),
            last_e2e: base,
            costs,
        })
    }

    /// The offline costs, `[request][candidate]`.
    pub fn costs(&self) -> &[Vec<PathCost>] {
        &self.costs
    }

    /// The candidate (index into the request type's paths) for a request of type `r`.
    pub fn choose(&self, r: usize) -> usize {
        let n = self.costs[r].len();
        let argmin =
            |f: &dyn Fn(usize) -> f64| (0..n).min_by(|&a, &b| f(a).total_cmp(&f(b))).unwrap_or(0);
        let fixed = |want: &dyn Fn(PathKind) -> bool| {
            self.kinds[r].iter().position(|&k| want(k)).unwrap_or(0)
        };
        match self.policy {
            Policy::Leo | Policy::LeoReset | Policy::Lp => argmin(&|i| {
                let c = self.costs[r][i];
                self.k_hat(self.paths[r][i]) as f64 * c.toll_ns + c.traverse_ns
            }),
            Policy::GreedyIntra => argmin(&|i| self.last_intra[r][i]),
            Policy::GreedyE2e => argmin(&|i| self.last_e2e[r][i]),
            Policy::Cpu => fixed(&|k| matches!(k, PathKind::CpuCpu | PathKind::AccCpu)),
            Policy::Acc => fixed(&|k| matches!(k, PathKind::CpuAcc | PathKind::AccAcc)),
        }
    }

    /// Chooses the candidate for a request of type `r` ([`Selector::choose`]) and accounts
    /// it as sent on that path.
    pub fn dispatch(&mut self, r: usize) -> usize {
        let i = self.choose(r);
        self.sent(r, i);
        i
    }

    /// A request of type `r` went out on candidate `i` (chosen by any policy).
    pub fn sent(&mut self, r: usize, i: usize) {
        self.in_flight[self.paths[r][i]] += 1;
    }

    /// A request of type `r` sent on candidate `i` completed with these JCTs, ns.
    pub fn complete(&mut self, r: usize, i: usize, intra_ns: f64, e2e_ns: f64) {
        let p = self.paths[r][i];
        self.in_flight[p] = self.in_flight[p].saturating_sub(1);
        if intra_ns > self.costs[r][i].traverse_ns * (1.0 + 1e-9) {
            self.k_hat[p] += 1;
        } else {
            self.k_hat[p] = 0;
        }
        self.last_intra[r][i] = intra_ns;
        self.last_e2e[r][i] = e2e_ns;
    }

    /// `k̂` of path `p` under this policy's estimator.
    pub fn k_hat(&self, p: usize) -> u32 {
        match self.policy {
            Policy::Leo => self.in_flight[p],
            _ => self.k_hat[p],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leo::app::tests::KVS;
    use crate::leo::sim::Testbed;

    fn selector(policy: Policy) -> (Selector, usize) {
        let mut spec = AppSpec::from_yaml(KVS).unwrap();
        spec.hw = Testbed::f_nic().truth(&spec.hw);
        let get = spec.request("GET").unwrap();
        (Selector::new(&spec, policy).unwrap(), get)
    }

    #[test]
    fn leo_counts_in_flight_at_dispatch_and_releases_one_per_completion() {
        let (mut s, get) = selector(Policy::Leo);
        let first = s.dispatch(get);
        let p = s.paths[get][first];
        assert_eq!(s.k_hat(p), 1);
        // Dispatches pile onto the path until k̂·toll outweighs the other path's longer T.
        let mut on_p = 1;
        while s.dispatch(get) == first {
            on_p += 1;
            assert!(on_p < 100, "never moved off the accelerator");
        }
        assert_eq!(s.k_hat(p), on_p);
        let c = s.costs()[get][first];
        s.complete(get, first, c.traverse_ns, c.traverse_ns + 5e3);
        assert_eq!(
            s.k_hat(p),
            on_p - 1,
            "one fast completion releases one request"
        );
    }

    #[test]
    fn leo_reset_zeroes_on_one_fast_completion() {
        let (mut s, get) = selector(Policy::LeoReset);
        let i = s.dispatch(get);
        let p = s.paths[get][i];
        let c = s.costs()[get][i];
        for _ in 0..3 {
            s.complete(get, i, c.traverse_ns * 2.0, 1e4);
        }
        assert_eq!(s.k_hat(p), 3);
        s.complete(get, i, c.traverse_ns, 1e4);
        assert_eq!(s.k_hat(p), 0);
    }
}
