//! Online path selection (§III-B2) and the baselines of §V-C. LEO's heuristic: offline, the
//! base traverse time `T(p, r)` and the communication toll `Q_toll(p, r)` of every
//! request-path pair; online, `k̂_p` per path from monitored intra-host JCTs (one more when a
//! completion took longer than `T`, back to 0 otherwise) and the choice
//! `argmin_p k̂_p·Q_toll(p, r) + T(p, r)`. Greedy-Intra and Greedy-E2E pick the path whose last
//! intra-host / end-to-end JCT was lowest; CPU-only and accelerator-only use fixed paths.

use super::app::AppSpec;
use super::error::LeoError;
use super::path::{PathCost, PathKind};
use std::fmt;
use std::str::FromStr;

/// A path-selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// LEO's heuristic with the communication toll.
    Leo,
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
    pub const ALL: [Policy; 6] = [
        Policy::Leo,
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
                    format!("`{s}`: expected leo, cpu, acc, greedy-e2e, greedy-intra or lp"),
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
            Policy::Leo | Policy::Lp => argmin(&|i| {
                let c = self.costs[r][i];
                self.k_hat[self.paths[r][i]] as f64 * c.toll_ns + c.traverse_ns
            }),
            Policy::GreedyIntra => argmin(&|i| self.last_intra[r][i]),
            Policy::GreedyE2e => argmin(&|i| self.last_e2e[r][i]),
            Policy::Cpu => fixed(&|k| matches!(k, PathKind::CpuCpu | PathKind::AccCpu)),
            Policy::Acc => fixed(&|k| matches!(k, PathKind::CpuAcc | PathKind::AccAcc)),
        }
    }

    /// A request of type `r` sent on candidate `i` completed with these JCTs, ns.
    pub fn complete(&mut self, r: usize, i: usize, intra_ns: f64, e2e_ns: f64) {
        let p = self.paths[r][i];
        if intra_ns > self.costs[r][i].traverse_ns * (1.0 + 1e-9) {
            self.k_hat[p] += 1;
        } else {
            self.k_hat[p] = 0;
        }
        self.last_intra[r][i] = intra_ns;
        self.last_e2e[r][i] = e2e_ns;
    }

    /// `k̂` of path `p`.
    pub fn k_hat(&self, p: usize) -> u32 {
        self.k_hat[p]
    }
}
