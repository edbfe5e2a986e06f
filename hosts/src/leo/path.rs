//! The communication path (§III-A, Fig. 5a): the logical links a request traverses from the
//! requester to the responder and back, mapped onto the hardware model's physical links, with
//! the data size on each link and the estimated time from the profiled links.

use super::error::LeoError;
use super::hw::{DeviceKind, HardwareModel};

/// The four kinds of path: requester role → responder device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// CPU → CPU.
    CpuCpu,
    /// CPU → accelerator.
    CpuAcc,
    /// Accelerator → CPU.
    AccCpu,
    /// Accelerator → accelerator.
    AccAcc,
}

/// One element of a path: a device that computes or a link that carries bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Compute on device `0`.
    Compute(usize),
    /// Cross link `link`; `inbound` links (before the first compute step) carry the request,
    /// the others the response.
    Link {
        /// Link index in the model.
        link: usize,
        /// Whether it carries the request (else the response).
        inbound: bool,
    },
}

/// A resolved communication path.
#[derive(Debug, Clone, PartialEq)]
pub struct CommPath {
    /// Its name.
    pub name: String,
    /// Requester role → responder kind.
    pub kind: PathKind,
    /// Devices and links in order.
    pub steps: Vec<Step>,
}

/// Sizes and compute times of one request on one path, and what they cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathCost {
    /// Base traverse time `T(p, r)`: link traverse times plus compute times, ns.
    pub traverse_ns: f64,
    /// Communication toll `Q_toll(p, r)`: compute plus `S/BW` of each link, ns.
    pub toll_ns: f64,
}

impl CommPath {
    /// Resolves `via` (device names, starting and ending at the responder's NIC or switch)
    /// for requests coming from `from` (`cpu` or `acc`).
    pub fn resolve(
        hw: &HardwareModel,
        name: &str,
        from: DeviceKind,
        via: &[String],
    ) -> Result<CommPath, LeoError> {
        let ctx = format!("path {name}");
        if via.len() < 2 {
            return Err(LeoError::invalid(ctx, "`via` needs at least two devices"));
        }
        let devs = via
            .iter()
            .map(|d| hw.device(d, &ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let mut steps = Vec::new();
        let mut computed = false;
        for (i, &d) in devs.iter().enumerate() {
            if i > 0 {
                let hops = hw.route(devs[i - 1], d).ok_or_else(|| {
                    LeoError::invalid(&ctx, format!("no link from {} to {}", via[i - 1], via[i]))
                })?;
                steps.extend(hops.into_iter().map(|link| Step::Link {
                    link,
                    inbound: !computed,
                }));
            }
            if hw.devices[d].kind.computes() {
                steps.push(Step::Compute(d));
                computed = true;
            }
        }
        let to = steps.iter().rev().find_map(|s| match s {
            Step::Compute(d) => Some(hw.devices[*d].kind),
            Step::Link { .. } => None,
        });
        let kind = match (from, to) {
            (DeviceKind::Cpu, Some(DeviceKind::Cpu)) => PathKind::CpuCpu,
            (DeviceKind::Cpu, Some(DeviceKind::Acc)) => PathKind::CpuAcc,
            (DeviceKind::Acc, Some(DeviceKind::Cpu)) => PathKind::AccCpu,
            (DeviceKind::Acc, Some(DeviceKind::Acc)) => PathKind::AccAcc,
            (_, None) => return Err(LeoError::invalid(ctx, "no device on it computes")),
            _ => return Err(LeoError::invalid(ctx, "`from` must be cpu or acc")),
        };
        Ok(CommPath {
            name: name.to_string(),
            kind,
            steps,
        })
    }

    /// Data size on each step's link (0 for compute steps).
    pub fn bytes(&self, step: &Step, request: u64, response: u64) -> u64 {
        match step {
            Step::Link { inbound: true, .. } => request,
            Step::Link { inbound: false, .. } => response,
            Step::Compute(_) => 0,
        }
    }

    /// Estimated time of one request: `compute(d)` gives the compute time on device `d`.
    pub fn cost(
        &self,
        hw: &HardwareModel,
        request: u64,
        response: u64,
        compute: &dyn Fn(usize) -> Option<f64>,
    ) -> Result<PathCost, LeoError> {
        let mut c = PathCost {
            traverse_ns: 0.0,
            toll_ns: 0.0,
        };
        for s in &self.steps {
            match *s {
                Step::Compute(d) => {
                    let t = compute(d).ok_or_else(|| {
                        LeoError::invalid(
                            format!("path {}", self.name),
                            format!("no compute time for device {}", hw.devices[d].name),
                        )
                    })?;
                    c.traverse_ns += t;
                    c.toll_ns += t;
                }
                Step::Link { link, .. } => {
                    let p = hw.link_profile(link)?;
                    let b = self.bytes(s, request, response);
                    c.traverse_ns += p.traverse_ns(b);
                    c.toll_ns += p.service_ns(b);
                }
            }
        }
        Ok(c)
    }
}
