//! Tofino's MAU filters: the low-pass filter (`Lpf`) and weighted random early detection
//! (`Wred`), per cell, in virtual time (the pass's timestamp is passed in).
//!
//! - LPF: a 32-bit value `V` decaying as exp(−Δt/τ) between samples. `Rate`: `V·decay + x`;
//!   `Sample`: `V·decay + x·(1 − decay)`, with τ the gain time constant when `x > V`, the decay
//!   one otherwise. `V` saturates at 2³² − 1; the output is `V >> scale_down`.
//! - WRED: an average of the input kept the same way as a sampled LPF (τ the spec's time
//!   constant); below `min` the packet is not dropped, at or above `max` it is, in between it is
//!   dropped with a probability rising linearly to `max_probability`.
//!
//! A cell whose spec the control plane never wrote passes its input through (LPF) or never
//! drops (WRED).

use super::random::Random;

/// How an LPF cell combines samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LpfKind {
    /// A rate: every sample adds to the decayed value.
    Rate,
    /// A smoothed sample.
    #[default]
    Sample,
}

/// An LPF cell's configuration (bf-rt's `$LPF_SPEC_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LpfSpec {
    pub kind: LpfKind,
    pub gain_ns: u64,
    pub decay_ns: u64,
    /// Right shift of the output.
    pub scale_down: u8,
}

/// A WRED cell's configuration (bf-rt's `$WRED_SPEC_*`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WredSpec {
    pub time_constant_ns: u64,
    pub min_thresh: u32,
    pub max_thresh: u32,
    /// Drop probability at `max_thresh` (0 to 1).
    pub max_probability: f64,
}

/// One filter's configuration per cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FilterSpec {
    Lpf(LpfSpec),
    Wred(WredSpec),
}

#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    value: f64,
    last_ns: u64,
    seen: bool,
}

/// The cells of one filter on one pipe.
#[derive(Debug, Clone)]
pub struct FilterArray {
    specs: Vec<Option<FilterSpec>>,
    cells: Vec<Cell>,
}

const SATURATE: f64 = u32::MAX as f64;

fn decay(dt_ns: u64, tau_ns: u64) -> f64 {
    if tau_ns == 0 {
        0.0
    } else {
        (-(dt_ns as f64) / tau_ns as f64).exp()
    }
}

impl FilterArray {
    pub fn new(size: u32) -> FilterArray {
        FilterArray {
            specs: vec![None; size as usize],
            cells: vec![Cell::default(); size as usize],
        }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Sets cell `i`'s spec and restarts its state; false when `i` is out of range.
    pub fn set(&mut self, i: u32, spec: FilterSpec) -> bool {
        match (
            self.specs.get_mut(i as usize),
            self.cells.get_mut(i as usize),
        ) {
            (Some(s), Some(c)) => {
                *s = Some(spec);
                *c = Cell::default();
                true
            }
            _ => false,
        }
    }

    /// Cell `i`'s spec (None: never written, or out of range).
    pub fn spec(&self, i: u32) -> Option<FilterSpec> {
        self.specs.get(i as usize).copied().flatten()
    }

    /// Cell `i`'s current value (the LPF's `V`, WRED's average).
    pub fn value(&self, i: u32) -> Option<f64> {
        self.cells.get(i as usize).map(|c| c.value)
    }

    /// An LPF sample `x` at `now_ns`: the filtered output.
    pub fn lpf(&mut self, i: u32, x: u128, now_ns: u64) -> u128 {
        let (Some(spec), Some(cell)) = (self.specs.get(i as usize), self.cells.get_mut(i as usize))
        else {
            return x;
        };
        let Some(FilterSpec::Lpf(s)) = *spec else {
            return x;
        };
        let x = (x.min(u32::MAX as u128)) as f64;
        let dt = if cell.seen {
            now_ns.saturating_sub(cell.last_ns)
        } else {
            u64::MAX
        };
        let v = match s.kind {
            LpfKind::Rate => cell.value * decay(dt, s.decay_ns) + x,
            LpfKind::Sample => {
                let tau = if x > cell.value {
                    s.gain_ns
                } else {
                    s.decay_ns
                };
                let d = decay(dt, tau);
                cell.value * d + x * (1.0 - d)
            }
        };
        cell.value = v.min(SATURATE);
        cell.last_ns = now_ns;
        cell.seen = true;
        (cell.value as u128) >> s.scale_down.min(31)
    }

    /// A WRED sample `x` (a queue depth, in cells) at `now_ns`: whether to drop.
    pub fn wred(&mut self, i: u32, x: u128, now_ns: u64, rng: &mut Random) -> bool {
        let (Some(spec), Some(cell)) = (self.specs.get(i as usize), self.cells.get_mut(i as usize))
        else {
            return false;
        };
        let Some(FilterSpec::Wred(s)) = *spec else {
            return false;
        };
        let x = (x.min(u32::MAX as u128)) as f64;
        let dt = if cell.seen {
            now_ns.saturating_sub(cell.last_ns)
        } else {
            u64::MAX
        };
        let d = decay(dt, s.time_constant_ns);
        cell.value = (cell.value * d + x * (1.0 - d)).min(SATURATE);
        cell.last_ns = now_ns;
        cell.seen = true;
        let (avg, lo, hi) = (cell.value, f64::from(s.min_thresh), f64::from(s.max_thresh));
        if avg < lo {
            false
        } else if avg >= hi {
            true
        } else {
            rng.chance(s.max_probability * (avg - lo) / (hi - lo))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lpf(kind: LpfKind, gain: u64, decay: u64) -> FilterArray {
        let mut a = FilterArray::new(2);
        assert!(a.set(
            1,
            FilterSpec::Lpf(LpfSpec {
                kind,
                gain_ns: gain,
                decay_ns: decay,
                scale_down: 0,
            })
        ));
        a
    }

    #[test]
    fn an_unwritten_cell_passes_through_and_out_of_range_is_refused() {
        let mut a = FilterArray::new(2);
        assert_eq!(a.lpf(0, 1234, 10), 1234);
        assert!(!a.wred(0, 1 << 30, 10, &mut Random::new(1)));
        assert!(!a.set(2, FilterSpec::Lpf(LpfSpec::default())));
        assert_eq!(a.lpf(7, 5, 0), 5);
    }

    /// A sampled LPF moves a fraction 1 − exp(−Δt/τ) of the way to each sample.
    #[test]
    fn sample_lpf_follows_its_input_at_the_time_constant() {
        let mut a = lpf(LpfKind::Sample, 1000, 1000);
        assert_eq!(a.lpf(1, 1000, 0), 1000, "the first sample is taken whole");
        // 1000 ns later, at τ = 1000 ns: 1000·e⁻¹ + 0·(1 − e⁻¹) ≈ 367.
        assert_eq!(a.lpf(1, 0, 1000), 367);
        // Gain (rising) and decay (falling) constants differ: a fast rise, a slow fall.
        let mut b = lpf(LpfKind::Sample, 1, 1_000_000);
        b.lpf(1, 0, 0);
        assert!(b.lpf(1, 1000, 100) >= 999);
        assert!(b.lpf(1, 0, 200) >= 999);
    }

    /// A rate LPF sums decayed samples: a steady 1 per τ/10 settles near 10.5.
    #[test]
    fn rate_lpf_sums_decayed_samples() {
        let mut a = lpf(LpfKind::Rate, 1000, 1000);
        let mut out = 0;
        for k in 0..200u64 {
            out = a.lpf(1, 1, k * 100);
        }
        assert_eq!(out, 10);
        let v = a.value(1).unwrap();
        assert!((10.0..11.0).contains(&v), "{v}");
    }

    #[test]
    fn wred_drops_above_max_never_below_min_and_linearly_between() {
        let mut a = FilterArray::new(1);
        a.set(
            0,
            FilterSpec::Wred(WredSpec {
                time_constant_ns: 0,
                min_thresh: 100,
                max_thresh: 200,
                max_probability: 0.5,
            }),
        );
        let mut r = Random::new(7);
        assert!(!a.wred(0, 50, 1, &mut r));
        assert!(a.wred(0, 250, 2, &mut r));
        // At the midpoint: 0.25 of the packets.
        let drops = (0..4000).filter(|k| a.wred(0, 150, 3 + k, &mut r)).count();
        assert!((800..1200).contains(&drops), "{drops}");
    }
}
