//! Tofino's MAU filters: the low-pass filter (`Lpf`) and weighted random early detection
//! (`Wred`), per cell, in virtual time (the pass's timestamp is passed in).
//!
//! - LPF: the hardware's arithmetic on the RAM word the driver writes ([`super::lpf`]): a
//!   32-bit value, a 28-bit cycle timestamp, the time constants as exponents over one 9-bit
//!   mantissa, the decay approximated by shifts. `Rate` adds each sample to the decayed value,
//!   `Sample` moves towards it; the output is `V >> scale_down`.
//! - WRED: the same word as a sampled LPF with one time constant (bf-drivers
//!   `pipe_mgr_meter_tof_encode_wred_spec`), its RED fields the levels the driver encodes from
//!   the thresholds and probability ([`super::red`]); each sample moves the LPF and the ALU
//!   compares its unsaturated new value with the levels and a random number, one 64-bit draw of
//!   the seeded generator per execution: never a drop at or below `min`, always above `max`
//!   (both rounded down to a multiple of the levels' power of two), between them one rising to about
//!   `max_probability` at `max`.
//!
//! A cell whose spec the control plane never wrote passes its input through (LPF) or never
//! drops (WRED).

use super::lpf::{self, LpfWord};
use super::random::Random;
use super::red::{self, RedLevels};
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
        "min_thresh {min} is above max_thresh {max} (the driver's unsigned arithmetic would wrap)"
    )]
    ThresholdOrder { min: u32, max: u32 },
    #[error(
        "time constant {ns} ns is 2^{exponent} cycles or more: the LPF word's 5-bit exponent \
         holds at most 2^31 ({max_ns} ns)"
    )]
    LpfExponent { ns: u64, exponent: u32, max_ns: u64 },
}

impl FilterSpec {
    /// Refuses what the driver cannot encode: WRED (`pipe_mgr_meter_tof_encode_wred_spec`,
    /// `pipe_mgr_meter_compute_wred_params`) with a probability above 1 (as a `float`), one of
    /// 0 % (whole percent, rounded up), or `min_thresh == max_thresh` and a probability under
    /// 100 % (and, pisa's own refusal, `min_thresh > max_thresh`, where the driver's unsigned
    /// arithmetic wraps); an LPF (`pipe_mgr_meter_tof_encode_lpf_spec`) whose gain and decay
    /// constants, in cycles of `target`'s meter clock, do not share the RAM word's one 9-bit
    /// mantissa; either with a time constant whose exponent (what the driver writes past its
    /// 5 bits) is over 31.
    pub fn validate(&self, target: Target) -> Result<(), FilterSpecError> {
        let clock = lpf::meter_clock_hz(target);
        match *self {
            FilterSpec::Lpf(s) => {
                let gain = time_constant(s.gain_ns, clock)?;
                let decay = time_constant(s.decay_ns, clock)?;
                if gain.1 != decay.1 {
                    return Err(FilterSpecError::LpfMantissa {
                        gain: s.gain_ns,
                        decay: s.decay_ns,
                    });
                }
            }
            FilterSpec::Wred(s) => {
                let p = s.max_probability;
                // The spec's probability is a `float`.
                if !(0.0..=1.0).contains(&(p as f32)) {
                    return Err(FilterSpecError::ProbabilityRange(p));
                }
                time_constant(s.time_constant_ns, clock)?;
                let percent = red::max_drop_percent(p as f32);
                if percent == 0 {
                    return Err(FilterSpecError::ZeroProbability);
                }
                if s.min_thresh == s.max_thresh && percent != 100 {
                    return Err(FilterSpecError::EqualThresholds {
                        thresh: s.min_thresh,
                        p,
                    });
                }
                if s.min_thresh > s.max_thresh {
                    return Err(FilterSpecError::ThresholdOrder {
                        min: s.min_thresh,
                        max: s.max_thresh,
                    });
                }
            }
        }
        Ok(())
    }
}

/// A time constant's (exponent, mantissa) in `clock_hz` cycles, refused when the exponent does
/// not fit the word's 5 bits.
fn time_constant(ns: u64, clock_hz: u64) -> Result<(u32, u16), FilterSpecError> {
    let (exponent, mantissa) = lpf::encode_time_constant(ns, clock_hz);
    if exponent > lpf::MAX_EXPONENT {
        let max_ns = (1u128 << 32) * 1_000_000_000 / u128::from(clock_hz);
        return Err(FilterSpecError::LpfExponent {
            ns,
            exponent,
            max_ns: max_ns as u64,
        });
    }
    Ok((exponent, mantissa))
}

#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    /// The LPF RAM word (an LPF's or WRED's) and the clock its timestamp counts.
    lpf: LpfWord,
    clock_hz: u64,
    /// WRED's levels.
    red: RedLevels,
}

/// The cells of one filter on one pipe.
#[derive(Debug, Clone)]
pub struct FilterArray {
    specs: Vec<Option<FilterSpec>>,
    cells: Vec<Cell>,
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
                c.clock_hz = lpf::meter_clock_hz(target);
                match spec {
                    FilterSpec::Lpf(l) => {
                        let rate = l.kind == LpfKind::Rate;
                        c.lpf = LpfWord::new(rate, l.gain_ns, l.decay_ns, l.scale_down, c.clock_hz);
                    }
                    FilterSpec::Wred(w) => {
                        let tau = w.time_constant_ns;
                        c.lpf = LpfWord::new(false, tau, tau, 0, c.clock_hz);
                        let percent = red::max_drop_percent(w.max_probability as f32);
                        c.red = red::encode(w.min_thresh, w.max_thresh, percent);
                    }
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

    /// Cell `i`'s current value (the LPF word's `V`: an LPF's value, WRED's average).
    pub fn value(&self, i: u32) -> Option<f64> {
        self.cells.get(i as usize).map(|c| f64::from(c.lpf.v))
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

    /// A WRED sample `x` (a queue depth, in cells; a sample wider than 32 bits saturates) at
    /// `now_ns`: whether to drop.
    pub fn wred(&mut self, i: u32, x: u128, now_ns: u64, rng: &mut Random) -> bool {
        let (Some(spec), Some(cell)) = (self.specs.get(i as usize), self.cells.get_mut(i as usize))
        else {
            return false;
        };
        let Some(FilterSpec::Wred(_)) = *spec else {
            return false;
        };
        let d = x.min(u128::from(u32::MAX)) as u32;
        let q = cell.lpf.advance(d, lpf::cycles(now_ns, cell.clock_hz));
        red::drops(q, &cell.red, rng.next_u64())
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

    fn wred(min: u32, max: u32, p: f64) -> FilterArray {
        let mut a = FilterArray::new(1);
        let spec = WredSpec {
            time_constant_ns: 1000,
            min_thresh: min,
            max_thresh: max,
            max_probability: p,
        };
        assert!(a.set(0, FilterSpec::Wred(spec), Target::Tofino1));
        a
    }

    /// WRED averages on the LPF word (τ 1000 ns on Tofino 1: exponent 10, mantissa 97, as in
    /// `lpf::tests`), levels 100 / 100 / 200 (min 100, max 200, 100 %: `red::tests`), so the
    /// decisions below do not depend on the random number. 1000 at 0 ns: no time since the
    /// timestamp, V stays 0: kept (an exact exponential starting from the first sample would
    /// drop). 1000 at 1 µs (1220 cycles, SL 0): 1000 − 250 − 125 = 625 > 200: dropped. 0 at 2 µs
    /// (Δ 1222, SL 0): 156 + 78 = 234: dropped. 0 at 3 µs (timestamp 2436, Δ 1224, SL 0):
    /// 58 + 29 = 87: kept.
    #[test]
    fn wred_averages_through_the_lpf_word() {
        for seed in 0..8 {
            let mut a = wred(100, 200, 1.0);
            let mut r = Random::new(seed);
            assert!(!a.wred(0, 1000, 0, &mut r));
            assert_eq!(a.value(0), Some(0.0));
            assert!(a.wred(0, 1000, 1000, &mut r));
            assert_eq!(a.value(0), Some(625.0));
            assert!(a.wred(0, 0, 2000, &mut r));
            assert_eq!(a.value(0), Some(234.0));
            assert!(!a.wred(0, 0, 3000, &mut r));
            assert_eq!(a.value(0), Some(87.0));
        }
    }

    /// Between the levels the decision takes one 64-bit draw of the generator per execution:
    /// min 100, max 355, 50 % (levels 50 / 127 / 177, exponent 1, scale 1: `red::tests`); 300
    /// at 0 ns (V stays 0, no drop) and at 1 µs: 300 − 75 − 37 = 188, between the levels.
    #[test]
    fn wred_between_the_levels_draws_one_random_number_per_execution() {
        let levels = red::encode(100, 355, 50);
        let mut outcomes = Vec::new();
        for seed in 0..32 {
            let mut a = wred(100, 355, 0.5);
            let (mut r, mut twin) = (Random::new(seed), Random::new(seed));
            assert!(!a.wred(0, 300, 0, &mut r));
            twin.next_u64();
            let dropped = a.wred(0, 300, 1000, &mut r);
            assert_eq!(a.value(0), Some(188.0));
            assert_eq!(dropped, red::drops(188, &levels, twin.next_u64()));
            outcomes.push(dropped);
        }
        assert!(outcomes.contains(&true) && outcomes.contains(&false));
    }

    /// A cell held at `x`: the first sample at 16.4 µs (20008 cycles, ⌊log2⌋ 14, SL 4, the
    /// timestamp moving 19488 ≤ 20008) is taken whole, and a sampled LPF at V = D stays there.
    fn held(a: &mut FilterArray, x: u128, r: &mut Random, n: u64) -> usize {
        a.wred(0, x, 16_400, r);
        assert_eq!(a.value(0), Some(x as f64));
        (1..=n)
            .filter(|k| a.wred(0, x, 16_400 + k * 1000, r))
            .count()
    }

    /// At max (levels 100 / 125 / 200, exponent 0, scale 3 for min 100, max 200, 10 %:
    /// `red::tests`) a packet drops when 100 + ⌊125 R / 256⌋ < 200 (R ≤ 204: 205/256) and the
    /// three scale bits are 0 (1/8): 0.1001. Above max every packet drops. One threshold
    /// (min = max = 50, 100 %): at it nothing drops, above it all.
    #[test]
    fn wred_at_exactly_max_thresh_drops_with_max_probability() {
        let mut r = Random::new(3);
        let drops = held(&mut wred(100, 200, 0.1), 200, &mut r, 4000);
        assert!((300..500).contains(&drops), "{drops}");
        assert_eq!(held(&mut wred(100, 200, 0.1), 201, &mut r, 100), 100);
        assert_eq!(held(&mut wred(100, 200, 0.1), 100, &mut r, 100), 0);
        assert_eq!(held(&mut wred(50, 50, 1.0), 50, &mut r, 100), 0);
        assert_eq!(held(&mut wred(50, 50, 1.0), 51, &mut r, 100), 100);
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
        // pisa's own: min above max (the driver's `max - min` would wrap).
        assert_eq!(
            w(200, 100, 0.5),
            Err(FilterSpecError::ThresholdOrder { min: 200, max: 100 })
        );
        // The probability is a `float`: 1 + 1e-9 is 1.0 there, accepted as 100 %.
        assert_eq!(w(100, 100, 1.000_000_001), Ok(()));
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
        // WRED's time constant is encoded the same way (`pipe_mgr_meter_tof_encode_wred_spec`).
        let slow = FilterSpec::Wred(WredSpec {
            time_constant_ns: 4_000_000_000,
            min_thresh: 1,
            max_thresh: 2,
            max_probability: 1.0,
        });
        assert!(matches!(
            slow.validate(Target::Tofino1),
            Err(FilterSpecError::LpfExponent { exponent: 32, .. })
        ));
    }
}
