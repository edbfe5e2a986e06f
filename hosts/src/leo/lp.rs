//! The k-step path-selection problem of §III-B1 as a mixed-integer LP (eqs. 1–4), solved by
//! good_lp's pure-Rust microlp backend.
//!
//! Variables: `x[t][i]` ∈ {0,1} (request `t` on its `i`-th candidate, eq. 4: one per request);
//! `q[t][s] ≥ 0`, the backlog of resource `s` when request `t` arrives (eqs. 1–2: `q[t+1] ≥
//! q[t] + Σ_i x[t][i]·a(t,i,s) − Δt_t`; the `max{·,0}` is the lower bound 0, exact because the
//! objective only grows with `q`); `w[t][i] ≥ Q(p_i)_t − M·(1 − x[t][i])`, the big-M form of
//! `x·Q`. Objective (eq. 3): `Σ_t Σ_i w[t][i] + x[t][i]·T(p_i, r_t)`.

use super::error::LeoError;
use super::path::PathCost;
use super::queues::{Demand, Queues};
use good_lp::{
    constraint, microlp, variable, Expression, ProblemVariables, Solution, SolverModel, Variable,
};

/// One request of the horizon: its type and the time to the next arrival, ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Request type.
    pub request: usize,
    /// `Δt_t`.
    pub dt_ns: f64,
}

/// Solves the horizon from the backlogs `now`; returns the chosen candidate per request and
/// the objective (total intra-host JCT of the horizon, ns).
pub fn solve(
    costs: &[Vec<PathCost>],
    demands: &[Vec<Demand>],
    now: &Queues,
    horizon: &[Step],
) -> Result<(Vec<usize>, f64), LeoError> {
    let big_m = now.0.iter().sum::<f64>()
        + horizon
            .iter()
            .flat_map(|s| demands[s.request].iter().flatten().map(|&(_, a)| a))
            .sum::<f64>()
        + 1.0;
    let nres = now.0.len();
    let mut vars = ProblemVariables::new();
    let x: Vec<Vec<Variable>> = horizon
        .iter()
        .map(|s| vars.add_vector(variable().binary(), costs[s.request].len()))
        .collect();
    let w: Vec<Vec<Variable>> = horizon
        .iter()
        .map(|s| vars.add_vector(variable().min(0.0), costs[s.request].len()))
        .collect();
    let q: Vec<Vec<Variable>> = (1..horizon.len())
        .map(|_| vars.add_vector(variable().min(0.0), nres))
        .collect();
    let backlog = |t: usize, s: usize| -> Expression {
        if t == 0 {
            Expression::from(now.0[s])
        } else {
            Expression::from(q[t - 1][s])
        }
    };
    let mut objective = Expression::from(0.0);
    for (t, s) in horizon.iter().enumerate() {
        for (i, c) in costs[s.request].iter().enumerate() {
            objective += w[t][i] + x[t][i] * c.traverse_ns;
        }
    }
    let mut model = vars.minimise(objective).using(microlp);
    for (t, s) in horizon.iter().enumerate() {
        let one: Expression = x[t].iter().copied().sum();
        model = model.with(constraint!(one == 1.0));
        for (i, d) in demands[s.request].iter().enumerate() {
            let qp: Expression = d.iter().map(|&(r, _)| backlog(t, r)).sum();
            model = model.with(constraint!(w[t][i] >= qp - big_m + x[t][i] * big_m));
        }
        if t + 1 < horizon.len() {
            for (r, &next) in q[t].iter().enumerate() {
                let mut load = backlog(t, r) - s.dt_ns;
                for (i, d) in demands[s.request].iter().enumerate() {
                    for &(_, a) in d.iter().filter(|&&(res, _)| res == r) {
                        load += x[t][i] * a;
                    }
                }
                model = model.with(constraint!(next >= load));
            }
        }
    }
    let sol = model.solve().map_err(|e| LeoError::Solver(e.to_string()))?;
    let picks = x
        .iter()
        .map(|xs| {
            xs.iter()
                .enumerate()
                .max_by(|a, b| sol.value(*a.1).total_cmp(&sol.value(*b.1)))
                .map_or(0, |(i, _)| i)
        })
        .collect::<Vec<_>>();
    let total = simulate(costs, demands, now, horizon, &picks);
    Ok((picks, total))
}

/// Total intra-host JCT of `picks` over the horizon in the queue model (what the LP minimises).
pub fn simulate(
    costs: &[Vec<PathCost>],
    demands: &[Vec<Demand>],
    now: &Queues,
    horizon: &[Step],
    picks: &[usize],
) -> f64 {
    let mut q = now.clone();
    let mut total = 0.0;
    for (s, &i) in horizon.iter().zip(picks) {
        let d = &demands[s.request][i];
        total += q.wait(d) + costs[s.request][i].traverse_ns;
        q.admit(d);
        q.advance(s.dt_ns);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One request type, an accelerator path (T 4, holds resource 0 for 4) and a CPU path
    /// (T 6, holds resource 1 for 6); three requests at once. By hand: acc,acc,acc = 4+8+12;
    /// two acc and one cpu = 4+8+6 = 18 (optimal); one acc two cpu = 4+6+12.
    fn case() -> (Vec<Vec<PathCost>>, Vec<Vec<Demand>>) {
        let c = |t: f64| PathCost {
            traverse_ns: t,
            toll_ns: t,
        };
        (
            vec![vec![c(4.0), c(6.0)]],
            vec![vec![vec![(0, 4.0)], vec![(1, 6.0)]]],
        )
    }

    #[test]
    fn lp_matches_the_hand_solution() {
        let (costs, demands) = case();
        let h = [Step {
            request: 0,
            dt_ns: 0.0,
        }; 3];
        let (picks, total) = solve(&costs, &demands, &Queues::new(2), &h).unwrap();
        assert_eq!(total, 18.0);
        assert_eq!(picks.iter().filter(|&&p| p == 0).count(), 2, "{picks:?}");
        // With the accelerator's queue already 10 deep, all three go to the CPU path first.
        let busy = Queues(vec![10.0, 0.0]);
        let (picks, total) = solve(&costs, &demands, &busy, &h[..1]).unwrap();
        assert_eq!((picks, total), (vec![1], 6.0));
        // Spaced arrivals (Δt = 5 ≥ every service time): no queue, all on the fast path.
        let spaced = [Step {
            request: 0,
            dt_ns: 5.0,
        }; 4];
        let (picks, total) = solve(&costs, &demands, &Queues::new(2), &spaced).unwrap();
        assert_eq!((picks, total), (vec![0; 4], 16.0));
    }
}
