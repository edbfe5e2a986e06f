//! The application abstraction (§III-A, Fig. 5b) read from YAML: the hardware model, the
//! communication paths, and per request type its dependency (NONE/ADDR/MSG), its candidate
//! paths, the data sizes on the links and the compute time on each device. Every name is
//! checked; errors say where.

use super::error::LeoError;
use super::hw::{DeviceKind, HardwareModel};
use super::path::{CommPath, PathCost, Step};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Which requests must stay in order (§III-A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Dependency {
    /// Independent.
    None,
    /// Ordered with requests to the same address (a PUT before a later GET of that key).
    Addr,
    /// Ordered with requests of the same message.
    Msg,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathFile {
    name: String,
    from: DeviceKind,
    via: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestFile {
    #[serde(rename = "type")]
    name: String,
    dependency: Dependency,
    #[serde(default = "one")]
    share: f64,
    paths: Vec<String>,
    request_bytes: u64,
    response_bytes: u64,
    compute_ns: BTreeMap<String, f64>,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AppFile {
    name: String,
    hardware: HardwareModel,
    paths: Vec<PathFile>,
    requests: Vec<RequestFile>,
}

/// One request type.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestType {
    /// Its name (GET, PUT, ...).
    pub name: String,
    /// Its ordering constraint.
    pub dependency: Dependency,
    /// Its share of the workload (normalised to sum to 1).
    pub share: f64,
    /// Candidate paths (indices into [`AppSpec::paths`]), in the file's order.
    pub paths: Vec<usize>,
    /// Bytes on inbound links.
    pub request_bytes: u64,
    /// Bytes on outbound links.
    pub response_bytes: u64,
    /// Compute time per device index, ns.
    pub compute_ns: Vec<Option<f64>>,
}

/// A checked application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppSpec {
    /// Its name.
    pub name: String,
    /// The hardware model (profile it before [`AppSpec::costs`]).
    pub hw: HardwareModel,
    /// The communication paths.
    pub paths: Vec<CommPath>,
    /// The request types.
    pub requests: Vec<RequestType>,
}

impl AppSpec {
    /// Parses and checks an application file.
    pub fn from_yaml(text: &str) -> Result<AppSpec, LeoError> {
        let raw: AppFile = serde_saphyr::from_str(text).map_err(|e| {
            let (line, column) = e
                .location()
                .map(|l| (l.line() as usize, l.column() as usize))
                .unwrap_or((0, 0));
            LeoError::Yaml {
                line,
                column,
                message: e.to_string(),
            }
        })?;
        raw.hardware.check()?;
        let mut paths = Vec::new();
        for p in &raw.paths {
            if paths.iter().any(|q: &CommPath| q.name == p.name) {
                return Err(LeoError::Duplicate {
                    what: "path",
                    name: p.name.clone(),
                });
            }
            paths.push(CommPath::resolve(&raw.hardware, &p.name, p.from, &p.via)?);
        }
        let total: f64 = raw.requests.iter().map(|r| r.share).sum();
        let requests = raw
            .requests
            .iter()
            .map(|r| request(&raw.hardware, &paths, r, total))
            .collect::<Result<Vec<_>, _>>()?;
        if requests.is_empty() {
            return Err(LeoError::invalid(&raw.name, "no request types"));
        }
        Ok(AppSpec {
            name: raw.name,
            hw: raw.hardware,
            paths,
            requests,
        })
    }

    /// `costs[r][i]`: the cost of request type `r` on its `i`-th candidate path.
    pub fn costs(&self) -> Result<Vec<Vec<PathCost>>, LeoError> {
        self.requests
            .iter()
            .map(|r| {
                r.paths
                    .iter()
                    .map(|&p| {
                        self.paths[p].cost(&self.hw, r.request_bytes, r.response_bytes, &|d| {
                            r.compute_ns[d]
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// The request type named `name`.
    pub fn request(&self, name: &str) -> Option<usize> {
        self.requests.iter().position(|r| r.name == name)
    }
}

fn request(
    hw: &HardwareModel,
    paths: &[CommPath],
    r: &RequestFile,
    total: f64,
) -> Result<RequestType, LeoError> {
    let ctx = format!("request {}", r.name);
    if !(r.share.is_finite() && r.share >= 0.0 && total > 0.0) {
        return Err(LeoError::invalid(ctx, "share must be ≥ 0 and sum above 0"));
    }
    let mut compute_ns = vec![None; hw.devices.len()];
    for (dev, &ns) in &r.compute_ns {
        if !(ns.is_finite() && ns >= 0.0) {
            return Err(LeoError::invalid(&ctx, format!("compute_ns.{dev}: {ns}")));
        }
        compute_ns[hw.device(dev, &ctx)?] = Some(ns);
    }
    let mut idx = Vec::new();
    for name in &r.paths {
        let p = paths
            .iter()
            .position(|p| &p.name == name)
            .ok_or_else(|| LeoError::Unknown {
                context: ctx.clone(),
                what: "path",
                name: name.clone(),
            })?;
        for s in &paths[p].steps {
            if let Step::Compute(d) = s {
                if compute_ns[*d].is_none() {
                    return Err(LeoError::invalid(
                        &ctx,
                        format!(
                            "path {name} computes on {} but compute_ns has no entry for it",
                            hw.devices[*d].name
                        ),
                    ));
                }
            }
        }
        idx.push(p);
    }
    if idx.is_empty() {
        return Err(LeoError::invalid(ctx, "no candidate paths"));
    }
    Ok(RequestType {
        name: r.name.clone(),
        dependency: r.dependency,
        share: r.share / total,
        paths: idx,
        request_bytes: r.request_bytes,
        response_bytes: r.response_bytes,
        compute_ns,
    })
}

/// Parses arbitrary bytes as an application file (the fuzz target's entry): a spec or an
/// error, never a panic.
pub fn fuzz_parse(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(spec) = AppSpec::from_yaml(text) {
            let _ = spec.costs();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The KVS of §V (off-path model with an in-network accelerator at the NIC's switch).
    pub(crate) const KVS: &str = include_str!("../../../deploy/leo/kvs.yaml");

    #[test]
    fn parses_the_kvs() {
        let a = AppSpec::from_yaml(KVS).unwrap();
        assert_eq!(a.paths.len(), 2);
        assert_eq!(a.paths[1].kind, super::super::PathKind::CpuAcc);
        assert_eq!(a.requests[0].paths, vec![1, 0]);
        assert_eq!(a.requests[1].dependency, Dependency::Addr);
        assert!(a.costs().is_err(), "not profiled yet");
    }

    #[test]
    fn names_errors() {
        let e = AppSpec::from_yaml(&KVS.replace("paths: [acc, cpu]", "paths: [gpu]")).unwrap_err();
        assert_eq!(e.to_string(), "request GET: unknown path `gpu`");
        let e = AppSpec::from_yaml(&KVS.replace("acc: 180", "gpu: 180")).unwrap_err();
        assert_eq!(e.to_string(), "request GET: unknown device `gpu`");
        let e = AppSpec::from_yaml(&KVS.replace("dependency: ADDR, share: 0.95", "dependency: X"))
            .unwrap_err();
        assert!(matches!(e, LeoError::Yaml { line: 17, .. }), "{e}");
        let e = AppSpec::from_yaml(&KVS.replace(", acc: 180", "")).unwrap_err();
        assert!(e.to_string().contains("compute_ns has no entry"), "{e}");
    }
}
