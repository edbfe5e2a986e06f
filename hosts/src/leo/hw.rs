//! Hardware models (§III-A, Fig. 5c; §IV, Fig. 8): devices (CPU, NIC, accelerator, switch) as
//! nodes and physical links as edges. Each link's bandwidth, message rate and latency are not
//! typed in: [`HardwareModel::profile`] measures them at init through a [`LinkProbe`] (the
//! way LEO runs Hostping-style probes), and the estimates of [`crate::leo::path`] use them.

use super::error::LeoError;
use serde::Deserialize;
use std::collections::VecDeque;

/// What a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    /// A host CPU (computes).
    Cpu,
    /// An accelerator: an off-path node, a direct (PCIe-attached) device, or an in-network
    /// switch program (computes).
    Acc,
    /// A NIC (forwards only).
    Nic,
    /// A switch that only forwards.
    Switch,
}

impl DeviceKind {
    /// Whether requests can be computed on it.
    pub fn computes(self) -> bool {
        matches!(self, DeviceKind::Cpu | DeviceKind::Acc)
    }
}

/// A device of the model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Device {
    /// Its name in paths.
    pub name: String,
    /// What it is.
    pub kind: DeviceKind,
}

/// Measured performance of one link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkProfile {
    /// One-way latency of a 1-byte message, ns.
    pub latency_ns: f64,
    /// Bandwidth, bytes per ns (= GB/s).
    pub bytes_per_ns: f64,
    /// Messages per second a burst of small messages achieves.
    pub msgs_per_sec: f64,
}

impl LinkProfile {
    /// Time the link is busy with one `bytes`-byte message (the queue term `S/BW` of eq. 2,
    /// floored by the message rate).
    pub fn service_ns(&self, bytes: u64) -> f64 {
        (bytes as f64 / self.bytes_per_ns).max(1e9 / self.msgs_per_sec)
    }
    /// Base traverse time `T_tr` of one `bytes`-byte message: latency plus service.
    pub fn traverse_ns(&self, bytes: u64) -> f64 {
        self.latency_ns + self.service_ns(bytes)
    }
}

/// A physical link between two devices.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Link {
    /// Its name.
    pub name: String,
    /// One end (a device name).
    pub a: String,
    /// The other end.
    pub b: String,
    /// Filled by [`HardwareModel::profile`].
    #[serde(skip)]
    pub profile: Option<LinkProfile>,
}

/// Measures a link: the time, in ns, from handing the first of `count` back-to-back
/// `bytes`-byte messages to `link` until the last one arrives.
pub trait LinkProbe {
    /// One measurement.
    fn transfer(&mut self, link: &Link, bytes: u64, count: u32) -> f64;
}

/// Probe sizes of the profiling step.
const SMALL: u64 = 1;
const LARGE: u64 = 1 << 20;
const BURST_BYTES: u64 = 64;
const BURST: u32 = 1000;

/// A graph of devices and links.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareModel {
    /// The devices.
    pub devices: Vec<Device>,
    /// The links.
    pub links: Vec<Link>,
}

impl HardwareModel {
    /// Checks names: unique devices and links, links between known devices.
    pub fn check(&self) -> Result<(), LeoError> {
        for (i, d) in self.devices.iter().enumerate() {
            if self.devices[..i].iter().any(|e| e.name == d.name) {
                return Err(LeoError::Duplicate {
                    what: "device",
                    name: d.name.clone(),
                });
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            if self.links[..i].iter().any(|e| e.name == l.name) {
                return Err(LeoError::Duplicate {
                    what: "link",
                    name: l.name.clone(),
                });
            }
            for end in [&l.a, &l.b] {
                self.device(end, &format!("link {}", l.name))?;
            }
            if l.a == l.b {
                return Err(LeoError::invalid(format!("link {}", l.name), "a loop"));
            }
        }
        Ok(())
    }

    /// The index of device `name`.
    pub fn device(&self, name: &str, context: &str) -> Result<usize, LeoError> {
        self.devices
            .iter()
            .position(|d| d.name == name)
            .ok_or_else(|| LeoError::Unknown {
                context: context.to_string(),
                what: "device",
                name: name.to_string(),
            })
    }

    /// Profiles every link (latency with a 1-byte message, bandwidth from a 1 MiB one, message
    /// rate from a burst of 64-byte ones).
    pub fn profile(&mut self, probe: &mut dyn LinkProbe) {
        for l in &mut self.links {
            let lat = probe.transfer(l, SMALL, 1);
            let big = probe.transfer(l, LARGE, 1);
            let burst = probe.transfer(l, BURST_BYTES, BURST);
            l.profile = Some(LinkProfile {
                latency_ns: lat,
                bytes_per_ns: LARGE as f64 / (big - lat).max(1e-3),
                msgs_per_sec: BURST as f64 * 1e9 / (burst - lat).max(1e-3),
            });
        }
    }

    /// The profile of link `i`.
    pub fn link_profile(&self, i: usize) -> Result<LinkProfile, LeoError> {
        self.links[i]
            .profile
            .ok_or_else(|| LeoError::NotProfiled(self.links[i].name.clone()))
    }

    /// The physical links of the logical link `from → to`: the fewest-hop route in the graph.
    pub fn route(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; self.devices.len()];
        let mut seen = vec![false; self.devices.len()];
        seen[from] = true;
        let mut todo = VecDeque::from([from]);
        while let Some(d) = todo.pop_front() {
            if d == to {
                let mut hops = Vec::new();
                let mut at = to;
                while let Some((p, l)) = prev[at] {
                    hops.push(l);
                    at = p;
                }
                hops.reverse();
                return Some(hops);
            }
            for (li, l) in self.links.iter().enumerate() {
                let other = self.other_end(l, d);
                if let Some(o) = other.filter(|&o| !seen[o]) {
                    seen[o] = true;
                    prev[o] = Some((d, li));
                    todo.push_back(o);
                }
            }
        }
        None
    }

    fn other_end(&self, l: &Link, d: usize) -> Option<usize> {
        let name = &self.devices[d].name;
        let idx = |n: &str| self.devices.iter().position(|x| x.name == n);
        if &l.a == name {
            idx(&l.b)
        } else if &l.b == name {
            idx(&l.a)
        } else {
            None
        }
    }
}

/// A link whose behaviour is given by latency, bandwidth and a per-message cost: the modelled
/// PCIe-like and network links the labs run, and what the profiler is checked against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelledLink {
    /// One-way latency, ns.
    pub latency_ns: f64,
    /// Bytes per ns.
    pub bytes_per_ns: f64,
    /// Per-message cost, ns (the inverse of the message rate).
    pub per_msg_ns: f64,
}

impl ModelledLink {
    /// Busy time for one message.
    pub fn service_ns(&self, bytes: u64) -> f64 {
        (bytes as f64 / self.bytes_per_ns).max(self.per_msg_ns)
    }
}

/// A probe over a table of [`ModelledLink`]s keyed by link name.
#[derive(Debug, Clone, Default)]
pub struct ModelledProbe(pub Vec<(String, ModelledLink)>);

impl LinkProbe for ModelledProbe {
    fn transfer(&mut self, link: &Link, bytes: u64, count: u32) -> f64 {
        let m = self
            .0
            .iter()
            .find(|(n, _)| *n == link.name)
            .map(|(_, m)| *m)
            .unwrap_or(ModelledLink {
                latency_ns: 0.0,
                bytes_per_ns: f64::INFINITY,
                per_msg_ns: 0.0,
            });
        m.latency_ns + count as f64 * m.service_ns(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> HardwareModel {
        let dev = |n: &str, k| Device {
            name: n.into(),
            kind: k,
        };
        let link = |n: &str, a: &str, b: &str| Link {
            name: n.into(),
            a: a.into(),
            b: b.into(),
            profile: None,
        };
        HardwareModel {
            devices: vec![
                dev("cpu", DeviceKind::Cpu),
                dev("nic", DeviceKind::Nic),
                dev("acc", DeviceKind::Acc),
            ],
            links: vec![
                link("pcie-cpu", "cpu", "nic"),
                link("pcie-acc", "nic", "acc"),
            ],
        }
    }

    #[test]
    fn profile_recovers_link_parameters() {
        let mut m = model();
        let pcie = ModelledLink {
            latency_ns: 500.0,
            bytes_per_ns: 12.0,
            per_msg_ns: 20.0,
        };
        m.profile(&mut ModelledProbe(vec![("pcie-cpu".into(), pcie)]));
        let p = m.link_profile(0).unwrap();
        assert!((p.latency_ns - 520.0).abs() < 1e-6, "{p:?}");
        assert!((p.bytes_per_ns - 12.0).abs() / 12.0 < 0.01, "{p:?}");
        assert!((p.msgs_per_sec - 5e7).abs() / 5e7 < 0.01, "{p:?}");
        assert!((p.service_ns(64) - 20.0).abs() < 0.5);
    }

    #[test]
    fn routes_through_the_nic_and_names_bad_links() {
        let m = model();
        assert_eq!(m.route(0, 2), Some(vec![0, 1]));
        assert_eq!(m.route(2, 2), Some(vec![]));
        let mut bad = m.clone();
        bad.links[1].b = "gpu".into();
        assert_eq!(
            bad.check(),
            Err(LeoError::Unknown {
                context: "link pcie-acc".into(),
                what: "device",
                name: "gpu".into()
            })
        );
        assert!(m.link_profile(0).is_err());
    }
}
