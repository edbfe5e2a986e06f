//! Tofino's two-rate three-colour meter for TNA `Meter` / `DirectMeter`.
//!
//! Units are bytes or packets (the meter's `MeterKind`); rates are units per second and
//! bursts are units. Time is passed in (nanoseconds, from the caller's clock) and token
//! arithmetic is exact integers (tokens kept in unit-nanoseconds), so a run is reproducible.
//! Colours are TNA `MeterColor_t`: GREEN 0, YELLOW 1, RED 3.
//!
//! What is modelled, and from where (Intel's tofino-model `mau-meter.cpp`, the meter ALU; and
//! bf-p4c / tofino-model's `MauMeterAlu`: meters run at end of packet):
//! - Each cell keeps a stored colour (the colour map RAM, initialised GREEN by the driver).
//!   A packet's `execute` reads that colour, worsened by the pre-colour in colour-aware use:
//!   the colour the previous packet's update left ([`MeterState::decide`]).
//! - The update at end of packet ([`MeterState::charge`]) is charged by that colour: GREEN
//!   takes the units from both buckets, YELLOW from the peak bucket only, RED from neither.
//!   Each bucket is refilled by its rate and capped at its burst *before* the charge, so a
//!   bucket may go negative (unlike RFC 2698, which colours a packet larger than the tokens
//!   without charging). The new levels' signs give the stored colour for the next packet:
//!   peak < 0 → RED, else committed < 0 → YELLOW, else GREEN.
//! - Not modelled: the hardware's mantissa/exponent rate and burst encoding, the time scale
//!   and the level field widths, and probabilistic charging of large byte counts.
//!
//! Both buckets start full. An unconfigured meter ([`MeterState::default`]) passes everything
//! as GREEN. Time going backwards adds no tokens (it never panics).

use crate::ir::MeterKind;

/// `MeterColor_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum MeterColor {
    Green = 0,
    Yellow = 1,
    Red = 3,
}

impl MeterColor {
    pub fn value(self) -> u8 {
        self as u8
    }

    /// Reads a colour from a `MeterColor_t` value (2 is not a colour TNA defines; it is taken
    /// as YELLOW, the nearer colour, rather than refused, since it comes from packet data).
    pub fn from_value(v: u8) -> MeterColor {
        match v & 3 {
            0 => MeterColor::Green,
            3 => MeterColor::Red,
            _ => MeterColor::Yellow,
        }
    }
}

/// A trTCM configuration: committed / peak rate (units per second) and bursts (units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterConfig {
    pub cir: u64,
    pub pir: u64,
    pub cbs: u64,
    pub pbs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MeterError {
    #[error("peak rate {pir} is below the committed rate {cir}")]
    PirBelowCir { cir: u64, pir: u64 },
    #[error("meter index {index} is outside 0..{size}")]
    IndexOutOfRange { index: u32, size: u32 },
    #[error(
        "byte count adjustment {bytes} is outside -8192..=8191 (the meter ALU's 14-bit signed field)"
    )]
    ByteAdjustRange { bytes: i32 },
}

impl MeterConfig {
    /// From BfRt's byte-meter spec (`$METER_SPEC_CIR_KBPS`, `_PIR_KBPS`, `_CBS_KBITS`,
    /// `_PBS_KBITS`): kilobits (1000 bits) converted to bytes.
    pub fn from_kbits(cir_kbps: u64, pir_kbps: u64, cbs_kbits: u64, pbs_kbits: u64) -> Self {
        let b = |k: u64| k.saturating_mul(1000) / 8;
        MeterConfig {
            cir: b(cir_kbps),
            pir: b(pir_kbps),
            cbs: b(cbs_kbits),
            pbs: b(pbs_kbits),
        }
    }

    fn check(&self) -> Result<(), MeterError> {
        if self.pir < self.cir {
            return Err(MeterError::PirBelowCir {
                cir: self.cir,
                pir: self.pir,
            });
        }
        Ok(())
    }
}

const NS: u128 = 1_000_000_000;

/// One meter cell: configuration, the two token buckets and the stored colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterState {
    config: Option<MeterConfig>,
    /// Committed / peak levels in unit-nanoseconds (negative once overdrawn).
    tc: i128,
    tp: i128,
    last_ns: u64,
    /// The colour map RAM entry: what the last update left, read by the next packet.
    color: MeterColor,
}

impl Default for MeterState {
    fn default() -> Self {
        MeterState {
            config: None,
            tc: 0,
            tp: 0,
            last_ns: 0,
            color: MeterColor::Green,
        }
    }
}

/// `units` in unit-nanoseconds (a `u64` times 10^9 always fits an `i128`).
fn scaled(units: u64) -> i128 {
    i128::from(units) * NS as i128
}

/// A bucket refilled by `dt` ns at `rate`, capped at `burst` (a full bucket stays full).
fn refilled(level: i128, dt: u64, rate: u64, burst: u64) -> i128 {
    let cap = scaled(burst);
    if level >= cap {
        return cap;
    }
    // dt·rate < 2^128 as u128; anything reaching past the cap is the cap.
    let inc = u128::from(dt) * u128::from(rate);
    let room = (cap - level) as u128;
    if inc >= room {
        cap
    } else {
        level + inc as i128
    }
}

impl MeterState {
    /// A configured meter with full buckets at time `now_ns`.
    pub fn new(config: MeterConfig, now_ns: u64) -> Result<MeterState, MeterError> {
        config.check()?;
        Ok(MeterState {
            config: Some(config),
            tc: scaled(config.cbs),
            tp: scaled(config.pbs),
            last_ns: now_ns,
            color: MeterColor::Green,
        })
    }

    pub fn config(&self) -> Option<MeterConfig> {
        self.config
    }

    /// The committed and peak levels in units (rounded toward zero; negative once
    /// overdrawn), as of the last packet.
    pub fn levels(&self) -> (i64, i64) {
        let u = |l: i128| (l / NS as i128).clamp(i64::MIN.into(), i64::MAX.into()) as i64;
        (u(self.tc), u(self.tp))
    }

    /// The stored colour the next packet reads (GREEN when unconfigured).
    pub fn stored_color(&self) -> MeterColor {
        self.color
    }

    fn refill(&mut self, c: &MeterConfig, now_ns: u64) {
        let dt = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        self.tc = refilled(self.tc, dt, c.cir, c.cbs);
        self.tp = refilled(self.tp, dt, c.pir, c.pbs);
    }

    /// Meters `units` (bytes or 1 packet) at `now_ns`; `pre_color` makes it colour-aware.
    /// Returns the packet's colour: the stored one (worsened by `pre_color`); the update it
    /// then makes sets the colour the next packet reads.
    pub fn execute(
        &mut self,
        now_ns: u64,
        units: u64,
        pre_color: Option<MeterColor>,
    ) -> MeterColor {
        let color = self.decide(now_ns, units, pre_color);
        self.charge(color, units);
        color
    }

    /// The colour of a packet at `now_ns`: the stored colour, never better than `pre_color`.
    /// The buckets are refilled to `now_ns` (nothing charged; `units` does not change the
    /// colour, since the hardware reads the colour the previous update stored).
    pub fn decide(&mut self, now_ns: u64, units: u64, pre_color: Option<MeterColor>) -> MeterColor {
        let _ = units;
        let Some(c) = self.config else {
            return MeterColor::Green;
        };
        self.refill(&c, now_ns);
        let pre = pre_color.unwrap_or(MeterColor::Green);
        self.color.max(pre)
    }

    /// The end-of-packet update for a packet that [`MeterState::decide`] coloured `color`:
    /// takes `units` from the buckets that colour charges (GREEN both, YELLOW the peak
    /// bucket, RED none), letting them go negative, and stores the colour of the new levels'
    /// signs for the next packet.
    pub fn charge(&mut self, color: MeterColor, units: u64) {
        if self.config.is_none() {
            return;
        }
        let need = scaled(units);
        if color != MeterColor::Red {
            self.tp = self.tp.saturating_sub(need);
        }
        if color == MeterColor::Green {
            self.tc = self.tc.saturating_sub(need);
        }
        self.color = if self.tp < 0 {
            MeterColor::Red
        } else if self.tc < 0 {
            MeterColor::Yellow
        } else {
            MeterColor::Green
        };
    }
}

/// An indexed `Meter` array (or a `DirectMeter`, indexed by entry handle).
#[derive(Debug, Clone)]
pub struct MeterArray {
    kind: MeterKind,
    cells: Vec<MeterState>,
    /// Bytes added to every packet's length before a byte meter's update (a length that
    /// comes out below 0 counts 0): the meter ALU's `meter_bytecount_adjust`, one 14-bit
    /// signed value per meter. The compiler loads it with the negated `adjust_byte_count`;
    /// the control plane may replace it at run time (BfRt's `MeterByteCountAdjust` table
    /// attribute). A packet meter ignores it.
    byte_adjust: i32,
}

impl MeterArray {
    /// The least and greatest byte count adjustment (a 14-bit signed field).
    pub const BYTE_ADJUST_RANGE: std::ops::RangeInclusive<i32> = -8192..=8191;

    pub fn new(kind: MeterKind, size: u32) -> MeterArray {
        MeterArray {
            kind,
            cells: vec![MeterState::default(); size as usize],
            byte_adjust: 0,
        }
    }

    /// Control plane: the bytes added to every packet's length (see the field).
    pub fn set_byte_adjust(&mut self, bytes: i32) -> Result<(), MeterError> {
        if !Self::BYTE_ADJUST_RANGE.contains(&bytes) {
            return Err(MeterError::ByteAdjustRange { bytes });
        }
        self.byte_adjust = bytes;
        Ok(())
    }

    pub fn byte_adjust(&self) -> i32 {
        self.byte_adjust
    }

    pub fn kind(&self) -> MeterKind {
        self.kind
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    fn cell(&mut self, index: u32) -> Result<&mut MeterState, MeterError> {
        let size = self.cells.len() as u32;
        self.cells
            .get_mut(index as usize)
            .ok_or(MeterError::IndexOutOfRange { index, size })
    }

    /// Control plane: configures one cell (buckets refilled to full at `now_ns`).
    pub fn configure(
        &mut self,
        index: u32,
        config: MeterConfig,
        now_ns: u64,
    ) -> Result<(), MeterError> {
        let st = MeterState::new(config, now_ns)?;
        *self.cell(index)? = st;
        Ok(())
    }

    /// Control plane: back to unconfigured (everything GREEN).
    pub fn reset(&mut self, index: u32) -> Result<(), MeterError> {
        *self.cell(index)? = MeterState::default();
        Ok(())
    }

    pub fn get(&self, index: u32) -> Option<&MeterState> {
        self.cells.get(index as usize)
    }

    /// Packet path: meters a packet of `pkt_bytes` bytes (before the byte count
    /// adjustment). An out-of-range index is GREEN
    /// (the executor should count it as a program error).
    pub fn execute(
        &mut self,
        index: u32,
        now_ns: u64,
        pkt_bytes: u32,
        pre_color: Option<MeterColor>,
    ) -> MeterColor {
        let color = self.decide(index, now_ns, pkt_bytes, pre_color);
        self.charge(index, color, pkt_bytes);
        color
    }

    /// Packet path, colour only (true egress accounting: the buckets are charged with the
    /// packet's final length by [`MeterArray::charge`] once the egress deparser has sent it).
    pub fn decide(
        &mut self,
        index: u32,
        now_ns: u64,
        pkt_bytes: u32,
        pre_color: Option<MeterColor>,
    ) -> MeterColor {
        let units = self.units(pkt_bytes);
        match self.cells.get_mut(index as usize) {
            Some(c) => c.decide(now_ns, units, pre_color),
            None => MeterColor::Green,
        }
    }

    /// Charges a packet of `pkt_bytes` that [`MeterArray::decide`] coloured `color`.
    pub fn charge(&mut self, index: u32, color: MeterColor, pkt_bytes: u32) {
        let units = self.units(pkt_bytes);
        if let Some(c) = self.cells.get_mut(index as usize) {
            c.charge(color, units);
        }
    }

    fn units(&self, pkt_bytes: u32) -> u64 {
        match self.kind {
            MeterKind::Bytes => (i64::from(pkt_bytes) + i64::from(self.byte_adjust)).max(0) as u64,
            MeterKind::Packets => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MeterColor::*;

    #[test]
    fn colour_values_are_tna() {
        assert_eq!(Green.value(), 0);
        assert_eq!(Yellow.value(), 1);
        assert_eq!(Red.value(), 3);
        assert_eq!(MeterColor::from_value(3), Red);
        assert_eq!(MeterColor::from_value(2), Yellow);
    }

    #[test]
    fn burst_then_colours_in_order() {
        // CIR 1000 B/s, PIR 2000 B/s, CBS 1000 B, PBS 2000 B; 500-byte packets all at t=0.
        // Each packet reads the colour the previous update stored; GREEN charges both
        // buckets, YELLOW the peak one: levels (c, p) after each are (500, 1500) G,
        // (0, 1000) G, (-500, 500) Y, (-500, 0) Y, (-500, -500) R, then RED charges nothing.
        let cfg = MeterConfig {
            cir: 1000,
            pir: 2000,
            cbs: 1000,
            pbs: 2000,
        };
        let mut m = MeterState::new(cfg, 0).unwrap();
        let seq: Vec<MeterColor> = (0..6).map(|_| m.execute(0, 500, None)).collect();
        assert_eq!(seq, vec![Green, Green, Green, Yellow, Yellow, Red]);
        assert_eq!(m.levels(), (-500, -500));
        assert_eq!(m.stored_color(), Red);
        // After 0.25 s: +250 B committed, +500 B peak → (-250, 0): the packet reads the stored
        // RED; its update leaves YELLOW (peak not negative), which the next packet reads.
        assert_eq!(m.execute(250_000_000, 500, None), Red);
        assert_eq!(m.levels(), (-250, 0));
        assert_eq!(m.execute(250_000_000, 500, None), Yellow);
        assert_eq!(m.levels(), (-250, -500));
        // After a long idle time both buckets are full again (capped at the bursts): the
        // first packet still reads the stored RED and charges nothing; the next reads GREEN
        // and, oversized, drives both buckets negative.
        assert_eq!(m.execute(100_000_000_000, 3000, None), Red);
        assert_eq!(m.levels(), (1000, 2000));
        assert_eq!(m.execute(100_000_000_000, 3000, None), Green);
        assert_eq!(m.levels(), (-2000, -1000));
        assert_eq!(m.execute(100_000_000_000, 1, None), Red);
    }

    /// The audit's meter_trtcm: a packet meter, cir 1/s pir 2/s cbs 1 pbs 2, packets 1 us
    /// apart: G G Y R R (RFC 2698 would give G Y R R R).
    #[test]
    fn packet_trtcm_reads_the_previous_update() {
        let cfg = MeterConfig {
            cir: 1,
            pir: 2,
            cbs: 1,
            pbs: 2,
        };
        let mut m = MeterState::new(cfg, 0).unwrap();
        let seq: Vec<MeterColor> = (0..5).map(|i| m.execute(i * 1000, 1, None)).collect();
        assert_eq!(seq, vec![Green, Green, Yellow, Red, Red]);
    }

    /// The audit's meter_negative_buckets: cir = pir = 1000 pkt/s, bursts 2; six packets
    /// 1 us apart drive the buckets negative; after 2 ms of refill the seventh still reads
    /// the stored RED, and its own update (refilled, RED charges nothing) leaves GREEN.
    #[test]
    fn negative_buckets_keep_red_until_an_update() {
        let cfg = MeterConfig {
            cir: 1000,
            pir: 1000,
            cbs: 2,
            pbs: 2,
        };
        let mut m = MeterState::new(cfg, 0).unwrap();
        let seq: Vec<MeterColor> = (0..6).map(|i| m.execute(i * 1000, 1, None)).collect();
        assert_eq!(seq, vec![Green, Green, Green, Red, Red, Red]);
        assert_eq!(m.stored_color(), Red);
        assert_eq!(m.execute(2_005_000, 1, None), Red);
        assert_eq!(m.execute(2_006_000, 1, None), Green);
    }

    #[test]
    fn colour_aware_never_improves_a_colour() {
        let cfg = MeterConfig {
            cir: 1_000_000,
            pir: 1_000_000,
            cbs: 10_000,
            pbs: 10_000,
        };
        let mut m = MeterState::new(cfg, 0).unwrap();
        assert_eq!(m.execute(0, 100, Some(Yellow)), Yellow);
        assert_eq!(m.execute(0, 100, Some(Red)), Red);
        assert_eq!(m.execute(0, 100, Some(Green)), Green);
        // YELLOW charged the peak bucket only, RED nothing, GREEN both.
        assert_eq!(m.levels(), (9_900, 9_800));
        // A packet bigger than both buckets: coloured GREEN (the stored colour), charged
        // both, and the next packet reads RED whatever its pre-colour.
        assert_eq!(m.execute(0, 20_000, Some(Green)), Green);
        assert_eq!(m.execute(0, 1, Some(Green)), Red);
    }

    #[test]
    fn packet_meter_and_array_bounds() {
        let mut a = MeterArray::new(MeterKind::Packets, 2);
        assert_eq!(a.execute(0, 0, 1500, None), Green, "unconfigured is green");
        a.configure(
            1,
            MeterConfig {
                cir: 1,
                pir: 1,
                cbs: 1,
                pbs: 1,
            },
            0,
        )
        .unwrap();
        assert_eq!(a.execute(1, 0, 1500, None), Green);
        assert_eq!(
            a.execute(1, 0, 64, None),
            Green,
            "reads the first update's GREEN"
        );
        assert_eq!(a.execute(1, 0, 64, None), Red);
        // 1 s refills the buckets from -1 to 0: this packet reads RED, its update GREEN.
        assert_eq!(a.execute(1, 1_000_000_000, 64, None), Red);
        assert_eq!(a.execute(1, 1_000_000_000, 64, None), Green);
        assert_eq!(a.execute(9, 0, 64, None), Green);
        assert_eq!(
            a.configure(
                5,
                MeterConfig {
                    cir: 1,
                    pir: 1,
                    cbs: 1,
                    pbs: 1
                },
                0
            ),
            Err(MeterError::IndexOutOfRange { index: 5, size: 2 })
        );
        assert_eq!(
            MeterState::new(
                MeterConfig {
                    cir: 2,
                    pir: 1,
                    cbs: 1,
                    pbs: 1
                },
                0
            )
            .unwrap_err(),
            MeterError::PirBelowCir { cir: 2, pir: 1 }
        );
        assert_eq!(MeterConfig::from_kbits(8, 16, 8, 16).cir, 1000);
    }
}
