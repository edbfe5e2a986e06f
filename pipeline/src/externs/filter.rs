//! Tofino's MAU filters: the low-pass filter (`Lpf`) and weighted random early detection
//! (`Wred`), per cell, in virtual time (the pass's timestamp is passed in).
//!
//! - LPF: a 32-bit value `V` decaying as exp(−Δt/τ) between samples. `Rate`: `V·decay + x`;
//!   `Sample`: `V·decay + x·(1 − decay)`, with τ the gain time constant when `x > V`, the decay
//!   one otherwise. `V` saturates at 2³² − 1; the output is `V >> scale_down`.
//! - WRED: an average of the input kept the same way as a sampled LPF (τ the spec's time
//!   constant); at or below `min` the packet is not dropped, above `max` it is, in between it
//!   is dropped with a probability rising linearly to `max_probability` (reached at `max`).
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

/// A spec the SDE driver refuses to encode (bf-drivers `pipe_mgr_meter_drv_workflows.c`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FilterSpecError {
    #[error("max_probability {0} is not between 0 and 1")]
    ProbabilityRange(f64),
    #[error(
        "max_probability 0 is not supported for WRED (the driver rounds it up to whole percent \
         and refuses 0 %)"
    )]
    ZeroProbability,
    #[error(
        "min_thresh = max_thresh = {thresh} needs max_probability 1 (one threshold, everything \
         above it dropped), not {p}"
    )]
    EqualThresholds { thresh: u32, p: f64 },
    #[error(
        "gain_ns {gain} and decay_ns {decay} cannot share the LPF's one time-constant mantissa: \
         give equal constants or ones that differ by a power of two (e.g. 1000 and 4000)"
    )]
    LpfMantissa { gain: u64, decay: u64 },
}

impl FilterSpec {
    /// Refuses what the driver cannot encode: WRED (`pipe_mgr_meter_compute_wred_params`) with
    /// a drop probability of 0 % (whole percent, rounded up), or with `min_thresh ==
    /// max_thresh` and a probability under 100 %; an LPF (`pipe_mgr_meter_tof_encode_lpf_spec`)
    /// whose gain and decay constants do not share the RAM word's one 9-bit mantissa. Which
    /// pairs share it depends on the chip's clock; pisa has none and accepts the pairs that
    /// share it at any clock: equal, or one a power-of-two multiple of the other.
    pub fn validate(&self) -> Result<(), FilterSpecError> {
        match *self {
            FilterSpec::Lpf(s) => {
                let (lo, hi) = (s.gain_ns.min(s.decay_ns), s.gain_ns.max(s.decay_ns));
                let shared = lo == hi || (lo > 0 && hi % lo == 0 && (hi / lo).is_power_of_two());
                if !shared {
                    return Err(FilterSpecError::LpfMantissa {
                        gain: s.gain_ns,
                        decay: s.decay_ns,
                    });
                }
            }
            FilterSpec::Wred(s) => {
                let p = s.max_probability;
                if !(0.0..=1.0).contains(&p) {
                    return Err(FilterSpecError::ProbabilityRange(p));
                }
                let percent = (p * 100.0).ceil();
                if percent == 0.0 {
                    return Err(FilterSpecError::ZeroProbability);
                }
                if s.min_thresh == s.max_thresh && percent != 100.0 {
                    return Err(FilterSpecError::EqualThresholds {
                        thresh: s.min_thresh,
                        p,
                    });
                }
            }
        }
        Ok(())
    }
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
        // tofino-model `calculate_red_action_data`: a drop when the average is above a random
        // threshold between min and max, so certainly only above max; at max itself the
        // probability is `max_probability`, at min (or min = max) nothing drops.
        if avg > hi {
            true
        } else if avg <= lo {
            false
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

    fn wred(min: u32, max: u32, p: f64) -> FilterArray {
        let mut a = FilterArray::new(1);
        let spec = WredSpec {
            time_constant_ns: 0,
            min_thresh: min,
            max_thresh: max,
            max_probability: p,
        };
        assert!(a.set(0, FilterSpec::Wred(spec)));
        a
    }

    /// The hardware drops for certain only above `max_thresh` (tofino-model
    /// `calculate_red_action_data`: `Q > level_max`); at `max_thresh` the drop probability is
    /// `max_probability`.
    #[test]
    fn wred_at_exactly_max_thresh_drops_with_max_probability() {
        let mut a = wred(100, 200, 0.1);
        let mut r = Random::new(3);
        let drops = (0..4000).filter(|k| a.wred(0, 200, k + 1, &mut r)).count();
        assert!((300..500).contains(&drops), "{drops}");
        assert!(a.wred(0, 201, 5000, &mut r));
        // One threshold (min = max, probability 1): at it nothing drops, above it all.
        let mut b = wred(50, 50, 1.0);
        assert!(!(0..100).any(|k| b.wred(0, 50, k + 1, &mut r)));
        assert!((0..100).all(|k| b.wred(0, 51, 200 + k, &mut r)));
    }

    /// What bf-drivers refuses to encode: WRED at 0 %, min = max below 100 %, an LPF whose
    /// gain and decay constants do not share one mantissa.
    #[test]
    fn specs_the_driver_refuses_are_refused() {
        let w = |min, max, p| {
            FilterSpec::Wred(WredSpec {
                time_constant_ns: 1000,
                min_thresh: min,
                max_thresh: max,
                max_probability: p,
            })
            .validate()
        };
        assert_eq!(w(100, 200, 0.0), Err(FilterSpecError::ZeroProbability));
        assert_eq!(
            w(100, 200, 1.5),
            Err(FilterSpecError::ProbabilityRange(1.5))
        );
        assert_eq!(
            w(100, 100, 0.5),
            Err(FilterSpecError::EqualThresholds {
                thresh: 100,
                p: 0.5
            })
        );
        // Whole percent, rounded up: 0.001 is 1 %, 0.995 is 100 %.
        assert_eq!(w(100, 200, 0.001), Ok(()));
        assert_eq!(w(100, 100, 1.0), Ok(()));
        assert_eq!(w(100, 100, 0.995), Ok(()));
        let l = |gain, decay| {
            FilterSpec::Lpf(LpfSpec {
                kind: LpfKind::Sample,
                gain_ns: gain,
                decay_ns: decay,
                scale_down: 0,
            })
            .validate()
        };
        let refused = |gain, decay| Err(FilterSpecError::LpfMantissa { gain, decay });
        assert_eq!(l(1000, 5000), refused(1000, 5000));
        assert_eq!(l(1000, 3000), refused(1000, 3000));
        assert_eq!(l(0, 1000), refused(0, 1000));
        for (g, d) in [
            (1000, 1000),
            (1000, 4000),
            (8000, 1000),
            (0, 0),
            (3, 3 << 20),
        ] {
            assert_eq!(l(g, d), Ok(()), "{g} {d}");
        }
    }
}
