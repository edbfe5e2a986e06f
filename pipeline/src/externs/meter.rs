//! Two-rate three-colour marker (RFC 2698 trTCM) for TNA `Meter` / `DirectMeter`.
//!
//! Units are bytes or packets (the meter's `MeterKind`); rates are units per second and
//! bursts are units. Time is passed in (nanoseconds, from the caller's clock) and token
//! arithmetic is exact integers (tokens kept in unit-nanoseconds), so a run is reproducible.
//! Colours are TNA `MeterColor_t`: GREEN 0, YELLOW 1, RED 3.
//!
//! Both buckets start full. An unconfigured meter ([`MeterState::default`]) passes everything
//! as GREEN. Time going backwards adds no tokens (it never panics).

use crate::ir::MeterKind;

/// `MeterColor_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// One meter cell: configuration plus the two token buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterState {
    config: Option<MeterConfig>,
    /// Committed / peak tokens in unit-nanoseconds.
    tc: u128,
    tp: u128,
    last_ns: u64,
}

impl MeterState {
    /// A configured meter with full buckets at time `now_ns`.
    pub fn new(config: MeterConfig, now_ns: u64) -> Result<MeterState, MeterError> {
        config.check()?;
        Ok(MeterState {
            config: Some(config),
            tc: u128::from(config.cbs) * NS,
            tp: u128::from(config.pbs) * NS,
            last_ns: now_ns,
        })
    }

    pub fn config(&self) -> Option<MeterConfig> {
        self.config
    }

    fn refill(&mut self, c: &MeterConfig, now_ns: u64) {
        let dt = u128::from(now_ns.saturating_sub(self.last_ns));
        self.last_ns = self.last_ns.max(now_ns);
        self.tc = self
            .tc
            .saturating_add(dt * u128::from(c.cir))
            .min(u128::from(c.cbs) * NS);
        self.tp = self
            .tp
            .saturating_add(dt * u128::from(c.pir))
            .min(u128::from(c.pbs) * NS);
    }

    /// Meters `units` (bytes or 1 packet) at `now_ns`; `pre_color` makes it colour-aware.
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

    /// The colour of a packet of `units` at `now_ns` (the buckets refilled, nothing charged).
    pub fn decide(&mut self, now_ns: u64, units: u64, pre_color: Option<MeterColor>) -> MeterColor {
        let Some(c) = self.config else {
            return MeterColor::Green;
        };
        self.refill(&c, now_ns);
        let need = u128::from(units) * NS;
        let pre = pre_color.unwrap_or(MeterColor::Green);
        if pre == MeterColor::Red || self.tp < need {
            MeterColor::Red
        } else if pre == MeterColor::Yellow || self.tc < need {
            MeterColor::Yellow
        } else {
            MeterColor::Green
        }
    }

    /// Takes `units` from the buckets a packet of `color` charges (GREEN both, YELLOW the
    /// peak bucket, RED none); a bucket holding less is emptied.
    pub fn charge(&mut self, color: MeterColor, units: u64) {
        if self.config.is_none() {
            return;
        }
        let need = u128::from(units) * NS;
        if color != MeterColor::Red {
            self.tp = self.tp.saturating_sub(need);
        }
        if color == MeterColor::Green {
            self.tc = self.tc.saturating_sub(need);
        }
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
        // CIR 1000 B/s, PIR 2000 B/s, CBS 1000 B, PBS 2000 B; 500-byte packets all at t=0:
        // two fit the committed bucket (green), the next two only the peak bucket (yellow),
        // then red.
        let cfg = MeterConfig {
            cir: 1000,
            pir: 2000,
            cbs: 1000,
            pbs: 2000,
        };
        let mut m = MeterState::new(cfg, 0).unwrap();
        let seq: Vec<MeterColor> = (0..5).map(|_| m.execute(0, 500, None)).collect();
        assert_eq!(seq, vec![Green, Green, Yellow, Yellow, Red]);
        // After 0.25 s: +250 B committed, +500 B peak → one 500 B packet is yellow.
        assert_eq!(m.execute(250_000_000, 500, None), Yellow);
        assert_eq!(m.execute(250_000_000, 500, None), Red);
        // After a long idle time both buckets are full again (capped at the bursts).
        assert_eq!(m.execute(100_000_000_000, 1000, None), Green);
        assert_eq!(m.execute(100_000_000_000, 1000, None), Yellow);
        assert_eq!(m.execute(100_000_000_000, 1, None), Red);
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
        assert_eq!(a.execute(1, 0, 64, None), Red);
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
