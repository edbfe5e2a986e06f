//! The machine a measurement ran on, as benches print it beside their figures: CPU model,
//! cores visible, and the load average seen, with a warning when other work competed (on a
//! busy machine the figures are low, and a reader should know).

use std::fmt;

/// What a bench prints about the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    /// The 1-minute load average when [`Machine::now`] was called (`None` without /proc).
    pub load: Option<f64>,
}

/// The CPU model from `/proc/cpuinfo`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

/// The 1-minute load average from `/proc/loadavg`.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl Machine {
    /// The machine now. Call it at the end of a run: the 1-minute load average then covers the
    /// run (the bench's own threads included).
    pub fn now() -> Machine {
        Machine {
            cpu: cpu_model(),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            load: load_average(),
        }
    }

    /// Whether more was runnable than `own_threads` of the bench could explain: other work
    /// competed for the cores.
    pub fn busy(&self, own_threads: usize) -> bool {
        self.load
            .is_some_and(|l| l > own_threads as f64 + 0.5 && l > self.cores as f64 * 0.75)
    }

    /// The JSON object benches put under `"machine"`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({ "cpu": self.cpu, "cores": self.cores, "load_average_1min": self.load })
    }

    /// `machine: CPU (N cores visible), load average L` and, when [`Machine::busy`], why the
    /// figures may be low.
    pub fn line(&self, own_threads: usize) -> String {
        let mut s = format!("{self}");
        if self.busy(own_threads) {
            s.push_str(&format!(
                "\n  warning: the load average ({:.1}) is above this bench's {own_threads} thread(s) \
                 on {} cores: other work competed, so the figures are low and noisy; rerun on an \
                 idle machine",
                self.load.unwrap_or(0.0),
                self.cores
            ));
        }
        s
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "machine: {} ({} cores visible)", self.cpu, self.cores)?;
        if let Some(l) = self.load {
            write!(f, ", load average {l:.2}")?;
        }
        Ok(())
    }
}

/// A bit rate as a person reads it: `200 Mbit/s`, `10 Gbit/s`, `unlimited` for 0.
pub fn bit_rate(bps: f64) -> String {
    if bps <= 0.0 {
        "unlimited".into()
    } else if bps >= 1e9 {
        format!("{} Gbit/s", round3(bps / 1e9))
    } else if bps >= 1e6 {
        format!("{} Mbit/s", round3(bps / 1e6))
    } else if bps >= 1e3 {
        format!("{} kbit/s", round3(bps / 1e3))
    } else {
        format!("{} bit/s", round3(bps))
    }
}

/// At most three decimals, trailing zeros dropped.
fn round3(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_their_unit() {
        assert_eq!(bit_rate(200e6), "200 Mbit/s");
        assert_eq!(bit_rate(10e9), "10 Gbit/s");
        assert_eq!(bit_rate(2.5e9), "2.5 Gbit/s");
        assert_eq!(bit_rate(0.0), "unlimited");
        assert_eq!(bit_rate(1500.0), "1.5 kbit/s");
    }

    #[test]
    fn a_busy_machine_is_said_to_be() {
        let m = Machine {
            cpu: "x".into(),
            cores: 2,
            load: Some(3.0),
        };
        assert!(m.busy(1));
        assert!(m.line(1).contains("other work competed"));
        let idle = Machine {
            load: Some(1.0),
            ..m.clone()
        };
        assert!(!idle.busy(1));
        assert!(!idle.line(1).contains("warning"));
        assert!(!Machine { load: None, ..m }.busy(1));
    }
}
