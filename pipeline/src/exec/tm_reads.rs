//! The output intrinsics the traffic manager reads after every pass, located once when the
//! engines are built: their PHV fields side by side in one small struct (four cache lines),
//! instead of looked up among all bound intrinsics for each packet. Each is read with one
//! 8-byte load at its first byte, a shift and a mask worked out here (an unbound one with a
//! zero mask: no branch).

use crate::ir::{FieldRef, Gress, Intrinsic, Value};
use crate::phv::Phv;

/// A field the program does not bind: it reads as 0.
const UNBOUND: FieldRef = FieldRef {
    offset: 0,
    width: 0,
};

/// Widest field read by one 8-byte load at its first byte and a 32-bit mask; wider ones
/// (no intrinsic the traffic manager reads is) go through [`Phv::get`].
const NARROW: u16 = 32;

/// One field of a [`TmReads`], with how to read it: the 8 bytes from the field's first byte
/// (big-endian) shifted right by `shift` and masked by `mask`. An unbound field reads as 0 (a
/// zero mask); a field wider than [`NARROW`] bits has `shift` above 63 and is read by
/// [`Phv::get`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmField {
    pub field: FieldRef,
    shift: u32,
    mask: u32,
}

impl TmField {
    /// How to read `field` (`UNBOUND`: always 0).
    pub fn new(field: FieldRef) -> TmField {
        let (shift, mask) = match field.width {
            0 => (0, 0),
            w if w <= NARROW => {
                let bit = field.offset % 8;
                (64 - bit - u32::from(w), u32::MAX >> (32 - u32::from(w)))
            }
            _ => (u32::MAX, 0),
        };
        TmField { field, shift, mask }
    }
}

impl Default for TmField {
    fn default() -> TmField {
        TmField::new(UNBOUND)
    }
}

/// PHV fields of the output metadata one gress hands the traffic manager (unbound ones, and
/// on egress all but `drop_ctl` and `mirror_io_select`, read as 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TmReads {
    pub drop_ctl: TmField,
    /// Tofino 2's `mirror_io_select` (Tofino 1 has none: unbound).
    pub mirror_io_select: TmField,
    pub pktgen: TmField,
    pub ucast: TmField,
    pub bypass: TmField,
    pub copy_to_cpu: TmField,
    pub grp_a: TmField,
    pub grp_b: TmField,
    pub level1_exclusion_id: TmField,
    pub level2_exclusion_id: TmField,
    pub rid: TmField,
    pub level1_mcast_hash: TmField,
    pub level2_mcast_hash: TmField,
    /// `ig_intr_tm_md.qid`.
    pub qid: TmField,
}

impl TmReads {
    /// The fields of `gress`, from its intrinsic bindings (`bind[Intrinsic as usize]`).
    pub fn new(gress: Gress, bind: &[Option<FieldRef>]) -> TmReads {
        let f = |which: Intrinsic| bind.get(which as usize).copied().flatten();
        let ig = |which: Intrinsic| {
            TmField::new(match gress {
                Gress::Ingress => f(which).unwrap_or(UNBOUND),
                Gress::Egress => UNBOUND,
            })
        };
        let drop_ctl = match gress {
            Gress::Ingress => f(Intrinsic::IgDprsrDropCtl),
            Gress::Egress => f(Intrinsic::EgDprsrDropCtl),
        };
        let mirror_io_select = match gress {
            Gress::Ingress => f(Intrinsic::IgDprsrMirrorIoSelect),
            Gress::Egress => f(Intrinsic::EgDprsrMirrorIoSelect),
        };
        TmReads {
            drop_ctl: TmField::new(drop_ctl.unwrap_or(UNBOUND)),
            mirror_io_select: TmField::new(mirror_io_select.unwrap_or(UNBOUND)),
            pktgen: ig(Intrinsic::IgDprsrPktgen),
            ucast: ig(Intrinsic::TmUcastEgressPort),
            bypass: ig(Intrinsic::TmBypassEgress),
            copy_to_cpu: ig(Intrinsic::TmCopyToCpu),
            grp_a: ig(Intrinsic::TmMcastGrpA),
            grp_b: ig(Intrinsic::TmMcastGrpB),
            level1_exclusion_id: ig(Intrinsic::TmLevel1ExclusionId),
            level2_exclusion_id: ig(Intrinsic::TmLevel2ExclusionId),
            rid: ig(Intrinsic::TmRid),
            level1_mcast_hash: ig(Intrinsic::TmLevel1McastHash),
            level2_mcast_hash: ig(Intrinsic::TmLevel2McastHash),
            qid: ig(Intrinsic::TmQid),
        }
    }
}

/// The value of `f` (one of a [`TmReads`]'s fields) in `phv` (0 when unbound).
#[inline]
pub fn read(phv: &Phv, f: TmField) -> Value {
    if f.shift > 63 {
        return phv.get(f.field);
    }
    let w = phv.word_at(f.field.offset as usize / 8);
    Value::from((w >> f.shift) as u32 & f.mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_what_the_bindings_say_and_unbound_ones_read_zero() {
        let mut bind = [None; 64];
        let ucast = FieldRef {
            offset: 7,
            width: 9,
        };
        let drop = FieldRef {
            offset: 40,
            width: 3,
        };
        bind[Intrinsic::TmUcastEgressPort as usize] = Some(ucast);
        bind[Intrinsic::IgDprsrDropCtl as usize] = Some(drop);
        let eg_io = FieldRef {
            offset: 50,
            width: 1,
        };
        bind[Intrinsic::EgDprsrMirrorIoSelect as usize] = Some(eg_io);
        let ig = TmReads::new(Gress::Ingress, &bind);
        let eg = TmReads::new(Gress::Egress, &bind);
        assert_eq!((ig.ucast.field, ig.drop_ctl.field), (ucast, drop));
        assert_eq!((eg.ucast.field, eg.drop_ctl.field), (UNBOUND, UNBOUND));
        let io = (ig.mirror_io_select.field, eg.mirror_io_select.field);
        assert_eq!(io, (UNBOUND, eg_io));
        let mut phv = Phv::new(16, 1);
        phv.set(ucast, 0x1ab);
        phv.set(drop, 5);
        assert_eq!(read(&phv, ig.ucast), 0x1ab);
        assert_eq!(read(&phv, ig.drop_ctl), 5);
        assert_eq!(read(&phv, ig.rid), 0);
        assert_eq!(std::mem::size_of::<TmReads>(), 256);
    }

    /// A field read by its load, shift and mask reads what `Phv::get` reads, for fields at
    /// every bit offset (straddling words or not), up to the last byte of the layout, of every
    /// width (the wide ones through `Phv::get`), among random bytes; an unbound one reads 0.
    #[test]
    fn narrow_reads_equal_phv_get_at_every_offset_and_width() {
        let mut r = crate::exec::flat::tests::Rng(0x9e37_79b9_7f4a_7c15);
        for len in [1usize, 7, 8, 13, 40] {
            let mut phv = Phv::new(len, 1);
            let bits = 8 * len as u32;
            for offset in 0..bits {
                for width in 0..=(bits - offset).min(70) as u16 {
                    let field = FieldRef { offset, width };
                    for _ in 0..2 {
                        for chunk in (0..bits).step_by(64) {
                            let w = (bits - chunk).min(64) as u16;
                            let at = FieldRef {
                                offset: chunk,
                                width: w,
                            };
                            phv.set(at, Value::from(r.next()));
                        }
                        let f = TmField::new(field);
                        assert_eq!(read(&phv, f), phv.get(field), "{field:?} in {len} bytes");
                    }
                }
            }
            assert_eq!(read(&phv, TmField::default()), 0);
        }
    }
}
