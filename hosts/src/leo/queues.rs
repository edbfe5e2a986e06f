//! The linearised queue model of eqs. 1–2: one backlog per resource (every device and link of
//! the hardware model); a request admitted on a path adds its compute time to each device and
//! its `S/BW` to each link on it; time drains every backlog. The LP plans over it and the
//! tests run the "true" hardware with it (with slowed links) as the ground truth.

use super::app::AppSpec;
use super::error::LeoError;
use super::path::Step;

/// What one request of one type puts on each resource of one candidate path.
pub type Demand = Vec<(usize, f64)>;

/// `demands[r][i]`: the demand of request type `r` on its `i`-th candidate path; resources
/// are numbered devices first, then links.
pub fn demands(spec: &AppSpec) -> Result<Vec<Vec<Demand>>, LeoError> {
    let nd = spec.hw.devices.len();
    spec.requests
        .iter()
        .map(|r| {
            r.paths
                .iter()
                .map(|&p| {
                    let path = &spec.paths[p];
                    path.steps
                        .iter()
                        .map(|s| match *s {
                            Step::Compute(d) => Ok((d, r.compute_ns[d].unwrap_or(0.0))),
                            Step::Link { link, .. } => {
                                let b = path.bytes(s, r.request_bytes, r.response_bytes);
                                Ok((nd + link, spec.hw.link_profile(link)?.service_ns(b)))
                            }
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Backlog per resource, ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Queues(pub Vec<f64>);

impl Queues {
    /// Empty queues for `n` resources.
    pub fn new(n: usize) -> Queues {
        Queues(vec![0.0; n])
    }
    /// Queue latency `Q(p)` a request on `demand`'s path meets now.
    pub fn wait(&self, demand: &Demand) -> f64 {
        demand.iter().map(|&(r, _)| self.0[r]).sum()
    }
    /// Admits a request on `demand`'s path.
    pub fn admit(&mut self, demand: &Demand) {
        for &(r, a) in demand {
            self.0[r] += a;
        }
    }
    /// Lets `dt` ns pass.
    pub fn advance(&mut self, dt: f64) {
        for q in &mut self.0 {
            *q = (*q - dt).max(0.0);
        }
    }
}
