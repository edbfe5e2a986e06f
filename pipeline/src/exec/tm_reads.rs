//! The output intrinsics the traffic manager reads after every pass, located once when the
//! engines are built: their PHV fields side by side in one small struct (two cache lines),
//! instead of looked up among all bound intrinsics for each packet.

use crate::ir::{FieldRef, Gress, Intrinsic, Value};
use crate::phv::Phv;

/// A field the program does not bind: it reads as 0.
const UNBOUND: FieldRef = FieldRef {
    offset: 0,
    width: 0,
};

/// PHV fields of the output metadata one gress hands the traffic manager (unbound ones, and
/// on egress all but `drop_ctl` and `mirror_io_select`, read as 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TmReads {
    pub drop_ctl: FieldRef,
    /// Tofino 2's `mirror_io_select` (Tofino 1 has none: unbound).
    pub mirror_io_select: FieldRef,
    pub pktgen: FieldRef,
    pub ucast: FieldRef,
    pub bypass: FieldRef,
    pub copy_to_cpu: FieldRef,
    pub grp_a: FieldRef,
    pub grp_b: FieldRef,
    pub level1_exclusion_id: FieldRef,
    pub level2_exclusion_id: FieldRef,
    pub rid: FieldRef,
    pub level1_mcast_hash: FieldRef,
    pub level2_mcast_hash: FieldRef,
    /// `ig_intr_tm_md.qid`.
    pub qid: FieldRef,
}

impl TmReads {
    /// The fields of `gress`, from its intrinsic bindings (`bind[Intrinsic as usize]`).
    pub fn new(gress: Gress, bind: &[Option<FieldRef>]) -> TmReads {
        let f = |which: Intrinsic| bind.get(which as usize).copied().flatten();
        let ig = |which: Intrinsic| match gress {
            Gress::Ingress => f(which).unwrap_or(UNBOUND),
            Gress::Egress => UNBOUND,
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
            drop_ctl: drop_ctl.unwrap_or(UNBOUND),
            mirror_io_select: mirror_io_select.unwrap_or(UNBOUND),
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
pub fn read(phv: &Phv, f: FieldRef) -> Value {
    if f.width == 0 {
        return 0;
    }
    phv.get(f)
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
        assert_eq!((ig.ucast, ig.drop_ctl), (ucast, drop));
        assert_eq!((eg.ucast, eg.drop_ctl), (UNBOUND, UNBOUND));
        assert_eq!((ig.mirror_io_select, eg.mirror_io_select), (UNBOUND, eg_io));
        let mut phv = Phv::new(16, 1);
        phv.set(ucast, 0x1ab);
        phv.set(drop, 5);
        assert_eq!(read(&phv, ig.ucast), 0x1ab);
        assert_eq!(read(&phv, ig.drop_ctl), 5);
        assert_eq!(read(&phv, ig.rid), 0);
        assert_eq!(std::mem::size_of::<TmReads>(), 128);
    }
}
