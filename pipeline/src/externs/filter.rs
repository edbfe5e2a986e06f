//! Tofino's MAU filters: the low-pass filter (`Lpf`) and weighted random early detection
//! (`Wred`), per cell, in virtual time (the pass's timestamp is passed in).
//!
//! - LPF: the hardware's arithmetic on the RAM word the driver writes ([`super::lpf`]): a
//!   32-bit value, a 28-bit cycle timestamp, the time constants as exponents over one 9-bit
//!   mantissa, the decay approximated by shifts. `Rate` adds each sample to the decayed value,
//!   `Sample` moves towards it; the output is `V >> scale_down`.
//! - WRED: an average of the input kept as an exact exponential (τ the spec's time constant);
//!   at or below `min` the packet is not dropped, above `max` it is, in between it is dropped
//!   with a probability rising linearly to `max_probability` (reached at `max`).
//!
//! A cell whose spec the control plane never wrote passes its input through (LPF) or never
//! drops (WRED).

use super::lpf::{self, LpfWord};
use super::random::Random;
use crate::ir::Target;

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
    #[error(
        "time constant {ns} ns is 2^{exponent} cycles or more: the LPF word's 5-bit exponent \
         holds at most 2^31 ({max_ns} ns)"
    )]
    LpfExponent { ns: u64, exponent: u32, max_ns: u64 },
}

impl FilterSpec {
    /// Refuses what the driver cannot encode: WRED (`pipe_mgr_meter_compute_wred_params`) with
    /// a drop probability of 0 % (whole percent, rounded up), or with `min_thresh ==
    /// max_thresh` and a probability under 100 %; an LPF (`pipe_mgr_meter_tof_encode_lpf_spec`)
    /// whose gain and decay constants, in cycles of `target`'s meter clock, do not share the
    /// RAM word's one 9-bit mantissa, or (what the driver writes past its 5 bits) need an
    /// exponent over 31.
    pub fn validate(&self, target: Target) -> Result<(), FilterSpecError> {
        match *self {
            FilterSpec::Lpf(s) => {
                let clock = lpf::meter_clock_hz(target);
                let (gain, decay) = (
                    lpf::encode_time_constant(s.gain_ns, clock),
                    lpf::encode_time_constant(s.decay_ns, clock),
                );
                for (ns, (exponent, _)) in [(s.gain_ns, gain), (s.decay_ns, decay)] {
                    if exponent > lpf::MAX_EXPONENT {
                        let max_ns = (1u128 << 32) * 1_000_000_000 / u128::from(clock);
                        return Err(FilterSpecError::LpfExponent {
                            ns,
                            exponent,
                            max_ns: max_ns as u64,
                        });
                    }
                }
                if gain.1 != decay.1 {
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
    /// WRED's average.
    value: f64,
    last_ns: u64,
    seen: bool,
    /// An LPF's RAM word and the clock its timestamp counts.
    lpf: LpfWord,
    clock_hz: u64,
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

    /// Sets cell `i`'s spec and restarts its state (an LPF's word as the driver writes it for
    /// `target`); false when `i` is out of range.
    pub fn set(&mut self, i: u32, spec: FilterSpec, target: Target) -> bool {
        match (
            self.specs.get_mut(i as usize),
            self.cells.get_mut(i as usize),
        ) {
            (Some(s), Some(c)) => {
                *s = Some(spec);
                *c = Cell::default();
                if let FilterSpec::Lpf(l) = spec {
                    c.clock_hz = lpf::meter_clock_hz(target);
                    let rate = l.kind == LpfKind::Rate;
                    c.lpf = LpfWord::new(rate, l.gain_ns, l.decay_ns, l.scale_down, c.clock_hz);
                }
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
        let lpf = matches!(self.spec(i), Some(FilterSpec::Lpf(_)));
        self.cells
            .get(i as usize)
            .map(|c| if lpf { f64::from(c.lpf.v) } else { c.value })
    }

    /// An LPF sample `x` at `now_ns`: the filtered output (a sample wider than 32 bits
    /// saturates).
    pub fn lpf(&mut self, i: u32, x: u128, now_ns: u64) -> u128 {
        let (Some(spec), Some(cell)) = (self.specs.get(i as usize), self.cells.get_mut(i as usize))
        else {
            return x;
        };
        let Some(FilterSpec::Lpf(_)) = *spec else {
            return x;
        };
        let d = x.min(u128::from(u32::MAX)) as u32;
        u128::from(cell.lpf.sample(d, lpf::cycles(now_ns, cell.clock_hz)))
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

    fn lpf(kind: LpfKind, gain: u64, decay: u64, target: Target) -> FilterArray {
        let mut a = FilterArray::new(2);
        assert!(a.set(
            1,
            FilterSpec::Lpf(LpfSpec {
                kind,
                gain_ns: gain,
                decay_ns: decay,
                scale_down: 0,
            }),
            target,
        ));
        a
    }

    #[test]
    fn an_unwritten_cell_passes_through_and_out_of_range_is_refused() {
        let mut a = FilterArray::new(2);
        assert_eq!(a.lpf(0, 1234, 10), 1234);
        assert!(!a.wred(0, 1 << 30, 10, &mut Random::new(1)));
        let spec = FilterSpec::Lpf(LpfSpec::default());
        assert!(!a.set(2, spec, Target::Tofino1));
        assert_eq!(a.lpf(7, 5, 0), 5);
    }

    /// Virtual time in ns is counted in cycles of the target's meter clock (see
    /// `lpf::tests` for the arithmetic). A rate LPF with τ = 1 ns (exponent 0 on either
    /// target) takes 10^6 at 0 ns (Δ = 0: V = 10^6), then 10^6 at 14 ns: Tofino 1 (1.22 GHz)
    /// sees 17 cycles, ⌊log2⌋ = 4 = SL, the sample is taken whole: 10^6; Tofino 2 (1 GHz)
    /// sees 14 cycles, SL = 3 (SR1 = 12, SR2 = 14): 244 + 61 + 10^6. (The timestamp moves by
    /// 1.0 · 2^4 = 16 ≤ 17 and 2^3 = 8 ≤ 14 cycles: no halving.)
    #[test]
    fn lpf_time_is_counted_in_the_targets_meter_cycles() {
        for (target, want) in [(Target::Tofino1, 1_000_000), (Target::Tofino2, 1_000_305)] {
            let mut a = lpf(LpfKind::Rate, 1, 1, target);
            assert_eq!(a.lpf(1, 1_000_000, 0), 1_000_000, "{target:?}");
            assert_eq!(a.lpf(1, 1_000_000, 14), want, "{target:?}");
            assert_eq!(a.value(1), Some(want as f64));
        }
        // A sample wider than 32 bits saturates: Δ = 0 on a rate filter adds it to V = 0.
        let mut r = lpf(LpfKind::Rate, 1000, 1000, Target::Tofino1);
        assert_eq!(r.lpf(1, 1 << 40, 0), u128::from(u32::MAX));
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
            Target::Tofino1,
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
        assert!(a.set(0, FilterSpec::Wred(spec), Target::Tofino1));
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
            .validate(Target::Tofino1)
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
        let lt = |gain, decay, target| {
            FilterSpec::Lpf(LpfSpec {
                kind: LpfKind::Sample,
                gain_ns: gain,
                decay_ns: decay,
                scale_down: 0,
            })
            .validate(target)
        };
        let l = |gain, decay| lt(gain, decay, Target::Tofino1);
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
        // Which pairs share the mantissa depends on the clock (lpf::encode_time_constant):
        // 999 ns is 1218.78 cycles on Tofino 1, (1218.78/1024 − 1)·512 = 97.4 → 97 like
        // 1000 ns; on Tofino 2 999 cycles give (999/512 − 1)·512 → 486.99999 → 486, 1000 ns 487.
        assert_eq!(l(999, 1000), Ok(()));
        assert_eq!(lt(999, 1000, Target::Tofino2), refused(999, 1000));
        // 4 s is 4.88·10^9 cycles on Tofino 1: exponent 32, past the word's 5 bits (2^32 cycles
        // are 2^32 · 10^9 / 1.22·10^9 = 3520464996 ns).
        assert_eq!(
            l(4_000_000_000, 4_000_000_000),
            Err(FilterSpecError::LpfExponent {
                ns: 4_000_000_000,
                exponent: 32,
                max_ns: 3_520_464_996
            })
        );
        assert_eq!(l(3_500_000_000, 3_500_000_000), Ok(()));
    }
}
