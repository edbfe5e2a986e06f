//! Tofino's low-pass filter as the meter ALU computes it, from the RAM word the SDE driver
//! writes: a 32-bit value `V`, a 28-bit timestamp in meter clock cycles, and the time constant
//! as an exponent (one per direction, 5 bits) over one shared 9-bit mantissa.
//!
//! - Encoding (bf-drivers `pipe_mgr_meter_drv_workflows.c`, `pipe_mgr_meter_tof_encode_lpf_spec`
//!   and `pipe_mgr_lpf_get_exponent_mantissa`): τ in cycles = `float(τ_ns) · float(clock) / 1e9`;
//!   the exponent counts the halvings that bring it under 2, the mantissa is
//!   `int((τ/2^e − 1) · 512)`. The word starts with `V` = 0 and timestamp 0. The clock is
//!   the one the driver converts with (`pipe_mgr_get_sp_clock_speed`): Tofino 1's core clock
//!   (1.22 GHz, the driver's default for the family: `pipe_mgr_set_dev_info`), 1 GHz on
//!   Tofino 2.
//! - A sample (tofino-model `mau-lpf-meter.cpp`, `MauLpfMeter::calculate_output`): the time
//!   since the stored timestamp `Δ` (28 bits, wrapping), `SL = ⌊log2 Δ⌋ − exponent` (the rise
//!   exponent when the sample is above `V` or the filter is a rate, the fall one otherwise);
//!   `SL ≤ −8` or `Δ = 0` leaves `V` (a rate adds the sample), `SL ≥ 4` takes the sample whole,
//!   in between shifts approximate the decay (see [`decayed`]). The timestamp advances by
//!   `1.mantissa · 2^⌊log2 Δ⌋` cycles (its mantissa bits below the binary point dropped), a
//!   power less when that would pass the present, and is never snapped to the present: the
//!   "LPF inertia fix" (`meter_lpf_sat_ctl`) is off on Tofino 1 (`get_meter_lpf_sat_ctl` is
//!   false there) and bf-asm never sets it on Tofino 2 (nor `meter_time_scale`, so the
//!   timestamp counts undivided cycles). `V` is computed on 33 bits and
//!   saturates at 2³² − 1; the output is `V >> scale_down`.
//!
//! The model's one-cycle forwarding cases (the same cell in consecutive cycles) do not arise:
//! pisa runs one packet at a time.

use crate::ir::Target;

/// Bits of the stored timestamp (`MauLpfMeter::kTimestampWidth`).
const TIMESTAMP_BITS: u32 = 28;
const TIMESTAMP_MASK: u64 = (1 << TIMESTAMP_BITS) - 1;
/// Bits of the time constant's mantissa (`kTimeConstantMantissaWidth`).
const MANTISSA_BITS: u32 = 9;
/// Largest exponent the word's 5-bit fields hold.
pub const MAX_EXPONENT: u32 = 31;

/// The clock (Hz) the driver converts time constants with and the LPF's timestamp counts.
pub fn meter_clock_hz(target: Target) -> u64 {
    match target {
        Target::Tofino1 => 1_220_000_000,
        Target::Tofino2 => 1_000_000_000,
    }
}

/// Nanoseconds of virtual time as cycles of a `clock_hz` clock.
pub fn cycles(now_ns: u64, clock_hz: u64) -> u64 {
    (u128::from(now_ns) * u128::from(clock_hz) / 1_000_000_000) as u64
}

/// A time constant as the driver encodes it: (exponent, mantissa), the exponent unmasked
/// (more than [`MAX_EXPONENT`] does not fit the word).
pub fn encode_time_constant(tau_ns: u64, clock_hz: u64) -> (u32, u16) {
    // The spec's constants are `float`s and the product is a `float` (the clock converted).
    let mut iter = f64::from(tau_ns as f32 * clock_hz as f32) / 1e9;
    let mut exponent = 0;
    while iter >= 2.0 {
        exponent += 1;
        iter /= 2.0;
    }
    let mantissa = ((iter - 1.0) * 512.0) as i64;
    (exponent, (mantissa & 0x1ff) as u16)
}

/// One LPF cell's RAM word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LpfWord {
    pub rate: bool,
    pub mantissa: u16,
    pub rise_exponent: u8,
    pub fall_exponent: u8,
    /// `lpf_action_scale`: the output's right shift.
    pub scale: u8,
    pub timestamp: u32,
    pub v: u32,
}

impl LpfWord {
    /// The word the driver writes for these constants (gain: rise, decay: fall; the shared
    /// mantissa is the gain's), `V` and the timestamp 0.
    pub fn new(rate: bool, gain_ns: u64, decay_ns: u64, scale: u8, clock_hz: u64) -> LpfWord {
        let (rise, mantissa) = encode_time_constant(gain_ns, clock_hz);
        let (fall, _) = encode_time_constant(decay_ns, clock_hz);
        LpfWord {
            rate,
            mantissa,
            rise_exponent: (rise & 0x1f) as u8,
            fall_exponent: (fall & 0x1f) as u8,
            scale: scale & 0x1f,
            timestamp: 0,
            v: 0,
        }
    }

    /// A sample `d` at `present` cycles: updates the word, returns the action data.
    pub fn sample(&mut self, d: u32, present: u64) -> u32 {
        let vnew = self.advance(d, present);
        (vnew.min(u64::from(u32::MAX)) as u32) >> self.scale
    }

    /// A sample `d` at `present` cycles: updates the word, returns the new `V` on its 33 bits
    /// before saturation (what RED compares with its levels: `calculate_red_action_data` is
    /// passed the unsaturated `Vnew`).
    pub fn advance(&mut self, d: u32, present: u64) -> u64 {
        let present = present & TIMESTAMP_MASK;
        let ts = u64::from(self.timestamp);
        let diff = present.wrapping_sub(ts) & TIMESTAMP_MASK;
        let exponent = if self.rate || d > self.v {
            self.rise_exponent
        } else {
            self.fall_exponent
        };
        let exponent = i32::from(exponent);
        let lead = if diff == 0 {
            0
        } else {
            63 - diff.leading_zeros() as i32
        };
        let mut sl = if diff == 0 { 0 } else { lead - exponent };
        let mut dte = lead;
        let mantissa = self.effective_mantissa(exponent);
        let mut new_ts = ts + delta_time(mantissa, dte, sl);
        // A timestamp that would pass the present (wrap taken into account) moves half as far.
        let present_cmp = if ts > present {
            present + (1 << TIMESTAMP_BITS)
        } else {
            present
        };
        if new_ts > present_cmp {
            sl -= 1;
            dte -= 1;
            new_ts = ts + delta_time(mantissa, dte, sl);
        }
        let vnew = decayed(u64::from(self.v), u64::from(d), self.rate, diff == 0, sl);
        let saturated = vnew.min(u64::from(u32::MAX)) as u32;
        self.timestamp = (new_ts & TIMESTAMP_MASK) as u32;
        self.v = saturated;
        vnew
    }

    /// `1.mantissa` as 10 bits, its bits below the binary point of `1.m · 2^exponent`
    /// dropped (`effective_mantissa` in `calculate_output`).
    fn effective_mantissa(&self, exponent: i32) -> u64 {
        let full = (1u64 << MANTISSA_BITS) | u64::from(self.mantissa);
        let keep = 0x200 | ((0x1ffu64 << 9) >> exponent.clamp(0, 9));
        full & keep
    }
}

/// How far the timestamp advances: `1.m · 2^dte` cycles, none for a negative `dte` or
/// `SL ≤ −8` ("LPF equation 9").
fn delta_time(mantissa: u64, dte: i32, sl: i32) -> u64 {
    if dte < 0 || sl <= -8 {
        0
    } else {
        (mantissa << dte) >> MANTISSA_BITS
    }
}

/// The shifts (SR1, SR2) of "Table 6.45: LPF Equations" for `-7 ≤ SL ≤ 3`: `e^-x`
/// approximated as `1 − 2^SL + 2^(2SL−1)` below the time constant, from "Table 6.44" at or
/// above it.
fn shifts(sl: i32) -> (u32, u32) {
    match sl {
        -7..=-1 => {
            let sr1 = (-sl) as u32;
            (sr1, 2 * sr1 + 1)
        }
        0 => (2, 3),
        1 => (3, 7),
        2 => (6, 9),
        _ => (12, 14),
    }
}

/// The new `V` (33 bits) from the old one and the sample `d`.
fn decayed(v: u64, d: u64, rate: bool, no_time: bool, sl: i32) -> u64 {
    let vnew = if no_time || sl <= -8 {
        if rate {
            v + d
        } else {
            v
        }
    } else if sl >= 4 {
        d
    } else {
        let (sr1, sr2) = shifts(sl);
        let kept = if sl >= 0 {
            (v >> sr1) + (v >> sr2)
        } else {
            v - (v >> sr1) + (v >> sr2)
        };
        let added = match (rate, sl >= 0) {
            (true, _) => d,
            (false, true) => d - (d >> sr1) - (d >> sr2),
            (false, false) => (d >> sr1) - (d >> sr2),
        };
        kept + added
    };
    vnew & 0x1_ffff_ffff
}

#[cfg(test)]
mod tests {
    //! Expected values worked by hand from the formulas of `calculate_output` (tofino-model
    //! `mau-lpf-meter.cpp`) and `pipe_mgr_lpf_get_exponent_mantissa` (bf-drivers), as the
    //! comment above each says; none comes from running this code.
    use super::*;

    /// Tofino 1, τ = 1000 ns: `float(1000) · float(1.22e9)` = 1219999956992 (the float
    /// product), / 1e9 = 1219.99995699 cycles; ten halvings give 1.19140621, and
    /// (0.19140621 · 512) = 97.99998 truncates to 97. Tofino 2 (1 GHz): 999.999995904
    /// cycles, nine halvings give 1.95312499, (0.95312499 · 512) = 487.99999 → 487. 4000 ns on
    /// Tofino 1: 4879.99982797 cycles, twelve halvings, the same 1.19140621 → 97.
    #[test]
    fn the_driver_encodes_a_time_constant_as_exponent_and_mantissa() {
        let t1 = meter_clock_hz(Target::Tofino1);
        assert_eq!(encode_time_constant(1000, t1), (10, 97));
        assert_eq!(
            encode_time_constant(1000, meter_clock_hz(Target::Tofino2)),
            (9, 487)
        );
        assert_eq!(encode_time_constant(4000, t1), (12, 97));
        // 0 ns: no halving, (0 − 1) · 512 = −512, whose low 9 bits are 0.
        assert_eq!(encode_time_constant(0, t1), (0, 0));
        assert_eq!(cycles(1000, t1), 1220);
        assert_eq!(cycles(600, meter_clock_hz(Target::Tofino2)), 600);
    }

    /// The timestamp advances by `1.m · 2^dte` with only the mantissa bits above the binary
    /// point: exponent 4 keeps 4 of mantissa 97 = 0b0_0110_0001, so 0b10_0110_0000 = 608;
    /// exponent 10 keeps all nine: 512 + 97 = 609.
    #[test]
    fn mantissa_bits_below_the_binary_point_do_not_count() {
        let w = LpfWord {
            mantissa: 97,
            ..LpfWord::default()
        };
        assert_eq!(w.effective_mantissa(4), 608);
        assert_eq!(w.effective_mantissa(10), 609);
        assert_eq!(w.effective_mantissa(0), 512);
    }

    /// A sampled LPF, τ = 1000 ns on Tofino 1 (exponent 10, mantissa 97: 1.m = 609/512).
    #[test]
    fn a_sampled_lpf_moves_towards_its_samples_by_shifts() {
        let mut w = LpfWord::new(false, 1000, 1000, 0, meter_clock_hz(Target::Tofino1));
        assert_eq!((w.rise_exponent, w.fall_exponent, w.mantissa), (10, 10, 97));
        // Cycle 0 (Δ = 0): no time has passed, a sampled filter keeps V = 0. The timestamp
        // would move by 609 >> 9 = 1, past the present, so it moves by 2^-1 → 0: it stays 0.
        assert_eq!(w.sample(1000, 0), 0);
        assert_eq!(w.timestamp, 0);
        // Cycle 1220 (1 µs): Δ = 1220, ⌊log2⌋ = 10, SL = 0 → SR1 = 2, SR2 = 3:
        // 0 + 0 + 1000 − 250 − 125 = 625. Timestamp + (609 << 10 >> 9) = 1218.
        assert_eq!(w.sample(1000, 1220), 625);
        assert_eq!(w.timestamp, 1218);
        // Cycle 2440, sample 0 (not above V: the fall exponent, also 10): Δ = 1222, SL = 0:
        // (625 >> 2) + (625 >> 3) = 156 + 78 = 234. Timestamp 1218 + 1218 = 2436.
        assert_eq!(w.sample(0, 2440), 234);
        assert_eq!(w.timestamp, 2436);
        // Δ = 2^14: SL = 4, the sample is taken whole; the timestamp would move by
        // 609 << 14 >> 9 = 19488, past the present (2436 + 16384 = 18820), so by 9744 and with
        // SL = 3 (SR1 = 12, SR2 = 14): (234 >> 12) + (234 >> 14) + 500 − 0 − 0 = 500.
        assert_eq!(w.sample(500, 18820), 500);
        assert_eq!(w.timestamp, 2436 + 9744);
    }

    /// Gain 1000 ns (exponent 10), decay 4000 ns (exponent 12, the same mantissa 97): a rise
    /// uses the gain's exponent, a fall the decay's.
    #[test]
    fn a_sampled_lpf_rises_and_falls_at_its_own_constants() {
        let mut w = LpfWord::new(false, 1000, 4000, 0, meter_clock_hz(Target::Tofino1));
        assert_eq!((w.rise_exponent, w.fall_exponent), (10, 12));
        w.sample(1000, 0);
        // As above: 625 at cycle 1220, timestamp 1218.
        assert_eq!(w.sample(1000, 1220), 625);
        // Cycle 2440, sample 0: Δ = 1222, ⌊log2⌋ = 10, SL = 10 − 12 = −2 → SR1 = 2, SR2 = 5:
        // 625 − 156 + 19 + 0 − 0 = 488.
        assert_eq!(w.sample(0, 2440), 488);
    }

    /// A rate LPF, τ = 1000 ns on Tofino 1, samples of 10^6.
    #[test]
    fn a_rate_lpf_adds_each_sample_to_the_decayed_value() {
        let mut w = LpfWord::new(true, 1000, 1000, 0, meter_clock_hz(Target::Tofino1));
        let d = 1_000_000;
        // Δ = 0: V + D.
        assert_eq!(w.sample(d, 0), 1_000_000);
        // Δ = 1220, SL = 0: 250000 + 125000 + 10^6. Timestamp 1218.
        assert_eq!(w.sample(d, 1220), 1_375_000);
        // Cycle 1830: Δ = 612, ⌊log2⌋ = 9, SL = −1 → SR1 = 1, SR2 = 3:
        // 1375000 − 687500 + 171875 + 10^6 = 1859375. Timestamp + (609 << 9 >> 9) = 1827.
        assert_eq!(w.sample(d, 1830), 1_859_375);
        assert_eq!(w.timestamp, 1827);
        // Δ = 2^14 (cycle 18211): SL = 4, but 1827 + 19488 passes the present: the timestamp
        // moves by 9744 (to 11571) and SL = 3 (SR1 = 12, SR2 = 14): 453 + 113 + 0 = 566.
        assert_eq!(w.sample(0, 18211), 566);
        assert_eq!(w.timestamp, 11571);
        // Δ = 0 again: 566 + (2^32 − 1) saturates at 2^32 − 1.
        assert_eq!(w.sample(u32::MAX, 11571), u32::MAX);
        // What RED compares is the 33-bit sum before saturation: Δ = 0, (2^32 − 1) · 2.
        assert_eq!(w.advance(u32::MAX, 11571), (1 << 33) - 2);
        assert_eq!(w.v, u32::MAX);
    }

    /// The 28-bit timestamp wraps: stored 2^28 − 10, present 2^28 + 1210 (1210 in 28 bits):
    /// Δ = 1220, SL = 0; the new timestamp 2^28 + 1208 is compared with 2^28 + 1210 (the
    /// present seen past the wrap), so it stands, stored as 1208. Scale 2: V >> 2.
    #[test]
    fn the_timestamp_wraps_at_28_bits_and_the_output_is_scaled() {
        let mut w = LpfWord::new(false, 1000, 1000, 2, meter_clock_hz(Target::Tofino1));
        w.timestamp = (1 << 28) - 10;
        w.v = 0;
        // 1000 − 250 − 125 = 625, output 625 >> 2 = 156.
        assert_eq!(w.sample(1000, (1 << 28) + 1210), 156);
        assert_eq!(w.timestamp, 1208);
        assert_eq!(w.v, 625);
    }
}
