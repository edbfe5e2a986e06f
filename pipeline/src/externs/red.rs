//! Tofino's RED (the `Wred` extern): the levels the SDE driver writes into an LPF RAM word and
//! the drop decision the meter ALU makes from them. The average itself is the LPF's, on the
//! same word ([`super::lpf::LpfWord`], sampled, one time constant for rise and fall).
//!
//! - Encoding (bf-drivers `pipe_mgr_meter_drv_workflows.c`,
//!   `pipe_mgr_meter_compute_wred_params`, `pipe_mgr_meter_get_red_exponent`,
//!   `pipe_mgr_meter_get_red_mantissa`, `pipe_mgr_meter_get_red_probability_scale`): the
//!   drop probability in whole percent, rounded up from the spec's `float`; "level 100" is the
//!   average at which the line from `(min, 0)` through `(max, p)` reaches 1 (computed in
//!   `float`s), unless `p` is 100 % (then it is `max`). A probability scale `s` (up to 7)
//!   multiplies the line's slope by `2^s` and keeps only one packet in `2^s`, when that does not
//!   need a larger level exponent. The three levels (`min`, `max`, level 100 − `min`) share one
//!   exponent: the fewest halvings that bring the largest under 256; each is stored as its 8-bit
//!   quotient (truncated).
//! - Decision (tofino-model `mau-lpf-meter.cpp`, `MauLpfMeter::calculate_red_action_data`):
//!   with `Q` the LPF's new value on 33 bits and a random number, `R = rng[7:0] ^
//!   reverse(rng[22:15])`, the threshold `min(level0 + (dlevel100 · R >> 8) & 0xff,
//!   level_max)`; a drop when `Q > threshold << exponent` and the scale's random bits
//!   (`rng[32:26]` reversed XOR `rng[14:8]`, masked to `s` bits) are 0, or when `Q > level_max
//!   << exponent`. The thresholds are therefore those of the spec rounded down to multiples of
//!   `2^exponent` (exact while every level is under 256).

/// The RED fields of the LPF word (`red_probability_scale` … `red_level0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedLevels {
    pub probability_scale: u8,
    pub level_exponent: u8,
    pub level_max: u8,
    pub dlevel100: u8,
    pub level0: u8,
}

/// The drop probability in whole percent as the driver rounds it: `ceil(p · 100)` on `float`s.
pub fn max_drop_percent(p: f32) -> u32 {
    (p * 100.0).ceil() as u32
}

/// The levels the driver writes for thresholds `min`..`max` and `percent` (from
/// [`max_drop_percent`]). The driver refuses 0 % and `min == max` below 100 %, and its unsigned
/// arithmetic wraps for `min > max`: the caller refuses those first (what this answers for them
/// is only free of panics).
pub fn encode(min: u32, max: u32, percent: u32) -> RedLevels {
    // The 8-bit random value standing for the probability (a `double` stored in a `float`).
    let rng = if percent < 100 {
        (f64::from(percent) / 100.0 * 255.0) as f32
    } else {
        255.0
    };
    let level100 = if min == max || percent >= 100 {
        max
    } else {
        line_level100(rng, min, max)
    };
    let mut dlevel100 = level100.wrapping_sub(min);
    let mut exponent = red_exponent(dlevel100, min, max);
    let mut scale = probability_scale(rng, percent);
    if scale > 0 && min != max {
        // The scaled line: steeper by 2^scale, kept when its exponent is no larger.
        let scaled = rng * f32::from(1u8 << scale);
        let d = line_level100(scaled, min, max).wrapping_sub(min);
        let e = red_exponent(d, min, max);
        if e <= exponent {
            (dlevel100, exponent) = (d, e);
        } else {
            scale = 0;
        }
    } else {
        scale = 0;
    }
    let mantissa = |level: u32| (level >> exponent) as u8;
    RedLevels {
        probability_scale: scale,
        level_exponent: exponent,
        level_max: mantissa(max),
        dlevel100: mantissa(dlevel100),
        level0: mantissa(min),
    }
}

/// Where the line through `(min, 0)` with slope `rng / (max − min)` (per 255) reaches 255:
/// `(255 + slope · min) / slope`, every step a `float`, truncated.
fn line_level100(rng: f32, min: u32, max: u32) -> u32 {
    let slope = rng / max.wrapping_sub(min) as f32;
    if slope == 0.0 {
        return 0;
    }
    ((255.0 + slope * min as f32) / slope) as u32
}

/// The fewest halvings that bring the largest level under 256.
fn red_exponent(dlevel100: u32, level0: u32, level_max: u32) -> u8 {
    let mut v = dlevel100.max(level0).max(level_max);
    let mut e = 0;
    while v > 255 {
        v /= 2;
        e += 1;
    }
    e
}

/// The largest scale `s` ≤ 7 whose `rng · 2^s` stays within 255 and whose `100 / 2^s` (in
/// whole percent) stays above `percent`.
fn probability_scale(rng: f32, percent: u32) -> u8 {
    let mut iter = f64::from(rng);
    let mut with_scaling = 100u32;
    let mut scale = 0u8;
    while iter <= 255.0 && with_scaling >= percent {
        iter *= 2.0;
        if scale == 7 {
            break;
        }
        scale += 1;
        with_scaling = (100.0 / f64::from(1u32 << scale)) as u32;
    }
    if iter > 255.0 || with_scaling <= percent {
        scale.saturating_sub(1)
    } else {
        scale
    }
}

/// Whether the ALU drops, for the LPF's new value `q` (33 bits) and the random number `rng`.
pub fn drops(q: u64, l: &RedLevels, rng: u64) -> bool {
    let r = (rng & 0xff) ^ u64::from(((rng >> 15) as u8).reverse_bits());
    let mask = (1u64 << l.probability_scale) - 1;
    let high = u64::from(((rng >> 26) as u8).reverse_bits()) >> 1;
    let scale_bits = mask & (high ^ (rng >> 8)) & 0x7f;
    let multiplied = ((u64::from(l.dlevel100) * r) >> 8) & 0xff;
    let threshold = (multiplied + u64::from(l.level0)).min(u64::from(l.level_max));
    let e = l.level_exponent;
    (q > threshold << e && scale_bits == 0) || q > u64::from(l.level_max) << e
}

#[cfg(test)]
mod tests {
    //! Expected values worked by hand from `pipe_mgr_meter_compute_wred_params` and its helpers
    //! (bf-drivers) and `calculate_red_action_data` (tofino-model), as the comment above each
    //! says; none comes from running this code.
    use super::*;

    /// `float` 0.07 is 0.0700000003, times 100 rounds to 7.0 in `float`: 7 % (a `double`
    /// product, 7.000000000000001, would round up to 8 %). 0.001 → 0.1 → 1 %; 0.995 → 99.5 →
    /// 100 %.
    #[test]
    fn the_probability_is_rounded_up_to_whole_percent_in_float() {
        assert_eq!(max_drop_percent(0.07), 7);
        assert_eq!(max_drop_percent(0.001), 1);
        assert_eq!(max_drop_percent(0.995), 100);
        assert_eq!(max_drop_percent(0.5), 50);
    }

    /// min 100, max 355, 50 %: rng = 0.5 · 255 = 127.5; slope 127.5 / 255 = 0.5, level 100 =
    /// (255 + 50) / 0.5 = 610, dlevel100 510 → exponent 1 (510 → 255). The scale: 127.5 → 255
    /// (s 1, 50 %), 255 ≤ 255 and 50 ≥ 50 → 510 (s 2, 25 %): past 255, so s = 1. Scaled:
    /// rng 255, slope 1, level 100 = 355, dlevel100 255, largest level 355 → exponent 1 ≤ 1:
    /// kept. Mantissas: 255 >> 1 = 127, 100 >> 1 = 50, 355 >> 1 = 177.
    #[test]
    fn levels_share_an_exponent_and_a_probability_scale_steepens_the_line() {
        let want = RedLevels {
            probability_scale: 1,
            level_exponent: 1,
            level_max: 177,
            dlevel100: 127,
            level0: 50,
        };
        assert_eq!(encode(100, 355, 50), want);
    }

    /// min 100, max 200, 10 %: rng 25.5. Unscaled: slope 25.5/100 = 0.255 (float
    /// 0.25499999523), 0.255 · 100 rounds to 25.5, (255 + 25.5) / 0.25499999523 = 1100.00002
    /// → 1100.0: dlevel100 1000, exponent 2. Scale: 25.5 → 51 (s 1, 50 %) → 102 (s 2, 25 %) →
    /// 204 (s 3, 12 %) → 408 (s 4, 6 %): past 255, s = 3. Scaled rng 204, slope 2.04 (float
    /// 2.03999996), 2.04 · 100 rounds to 204, 459 / 2.03999996 = 225.000004 → 225: dlevel100
    /// 125, largest level 200 → exponent 0 ≤ 2: kept.
    #[test]
    fn a_low_probability_takes_the_largest_scale_that_fits() {
        let want = RedLevels {
            probability_scale: 3,
            level_exponent: 0,
            level_max: 200,
            dlevel100: 125,
            level0: 100,
        };
        assert_eq!(encode(100, 200, 10), want);
    }

    /// 100 %: level 100 is max, rng 255 → scale: 255 → 510 (s 1): past 255, s = 0. min 0,
    /// max 2^32 − 1: dlevel100 2^32 − 1, 24 halvings → 255. min = max = 50: dlevel100 0.
    #[test]
    fn at_100_percent_level_100_is_max_and_nothing_is_scaled() {
        let l = encode(100, 200, 100);
        assert_eq!((l.probability_scale, l.level_exponent), (0, 0));
        assert_eq!((l.level0, l.dlevel100, l.level_max), (100, 100, 200));
        let l = encode(0, u32::MAX, 100);
        assert_eq!(
            (l.level_exponent, l.level0, l.dlevel100, l.level_max),
            (24, 0, 255, 255)
        );
        let l = encode(50, 50, 100);
        assert_eq!(
            (l.level_exponent, l.level0, l.dlevel100, l.level_max),
            (0, 50, 0, 50)
        );
    }

    /// Levels 100 / 100 / 200, exponent 0, no scale (min 100, max 200, 100 %).
    /// rng 0: R = 0, threshold 100: 100 stays, 101 drops. rng 0xff: R = 0xff ^ reverse(0) =
    /// 255, 100 · 255 >> 8 = 99, threshold 199. rng 1 << 15: R = reverse(0x01) = 0x80 = 128,
    /// 100 · 128 >> 8 = 50, threshold 150. Above level_max (200) every packet drops.
    #[test]
    fn the_threshold_moves_with_the_random_number_between_min_and_max() {
        let l = encode(100, 200, 100);
        assert!(!drops(100, &l, 0));
        assert!(drops(101, &l, 0));
        assert!(!drops(199, &l, 0xff));
        assert!(drops(200, &l, 0xff));
        assert!(!drops(150, &l, 1 << 15));
        assert!(drops(151, &l, 1 << 15));
        for rng in [0, 0xff, 1 << 15, u64::MAX] {
            assert!(drops(201, &l, rng));
            assert!(!drops(100, &l, rng));
        }
        // A 33-bit value past 2^32 (unsaturated) is above every level.
        assert!(drops(1 << 32, &l, u64::MAX));
    }

    /// Levels 50 / 127 / 177, exponent 1, scale 1 (min 100, max 355, 50 %): the one scale bit
    /// is bit 8 XOR bit 32 (reverse(rng[33:26]) >> 1, bit 0 of it is rng[32]). rng 1 << 8:
    /// scale bit 1, so 300 (above the threshold 50 << 1 = 100) stays; it drops above
    /// level_max << 1 = 354. rng (1 << 8) | (1 << 32): the bits cancel, R = 0: 300 drops, 100
    /// does not, 101 does.
    #[test]
    fn a_probability_scale_bit_keeps_the_packet_and_levels_are_quantised() {
        let l = encode(100, 355, 50);
        let r = 1 << 8;
        assert!(!drops(300, &l, r));
        assert!(!drops(354, &l, r));
        assert!(drops(355, &l, r));
        let r = (1 << 8) | (1 << 32);
        assert!(drops(300, &l, r));
        assert!(!drops(100, &l, r));
        assert!(drops(101, &l, r));
    }
}
