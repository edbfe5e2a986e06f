//! TNA intrinsic metadata: which architecture struct fields are which [`Intrinsic`], the
//! structs each gress owns, and the prefix the hardware puts in front of a packet.

use pipeline::ir::{FieldRef, Gress, Intrinsic, PrefixLayout, Target};

use crate::check::types::Ty;

/// Ingress intrinsic struct types, in the order they are allocated.
pub const INGRESS_STRUCTS: &[&str] = &[
    "ingress_intrinsic_metadata_t",
    "ingress_intrinsic_metadata_from_parser_t",
    "ingress_intrinsic_metadata_for_deparser_t",
    "ingress_intrinsic_metadata_for_tm_t",
];

/// Egress intrinsic struct types, in the order they are allocated.
pub const EGRESS_STRUCTS: &[&str] = &[
    "egress_intrinsic_metadata_t",
    "egress_intrinsic_metadata_from_parser_t",
    "egress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_for_output_port_t",
];

pub fn structs(gress: Gress) -> &'static [&'static str] {
    match gress {
        Gress::Ingress => INGRESS_STRUCTS,
        Gress::Egress => EGRESS_STRUCTS,
    }
}

/// True when `name` is any gress's intrinsic struct type.
pub fn is_intrinsic_struct(name: &str) -> bool {
    INGRESS_STRUCTS.contains(&name)
        || EGRESS_STRUCTS.contains(&name)
        || name == "ghost_intrinsic_metadata_t"
}

/// The intrinsic behind field `field` of architecture struct `ty`.
pub fn intrinsic(ty: &str, field: &str) -> Option<Intrinsic> {
    use Intrinsic::*;
    Some(match (ty, field) {
        ("ingress_intrinsic_metadata_t", "resubmit_flag") => IgResubmitFlag,
        ("ingress_intrinsic_metadata_t", "packet_version") => IgPacketVersion,
        ("ingress_intrinsic_metadata_t", "ingress_port") => IgIngressPort,
        ("ingress_intrinsic_metadata_t", "ingress_mac_tstamp") => IgIngressMacTstamp,
        ("ingress_intrinsic_metadata_from_parser_t", "global_tstamp") => IgPrsrGlobalTstamp,
        ("ingress_intrinsic_metadata_from_parser_t", "global_ver") => IgPrsrGlobalVer,
        ("ingress_intrinsic_metadata_from_parser_t", "parser_err") => IgPrsrParserErr,
        ("ingress_intrinsic_metadata_for_tm_t", f) => match f {
            "ucast_egress_port" => TmUcastEgressPort,
            "bypass_egress" => TmBypassEgress,
            "deflect_on_drop" => TmDeflectOnDrop,
            "ingress_cos" => TmIngressCos,
            "qid" => TmQid,
            "icos_for_copy_to_cpu" => TmIcosForCopyToCpu,
            "copy_to_cpu" => TmCopyToCpu,
            "packet_color" => TmPacketColor,
            "disable_ucast_cutthru" => TmDisableUcastCutthru,
            "enable_mcast_cutthru" => TmEnableMcastCutthru,
            "mcast_grp_a" => TmMcastGrpA,
            "mcast_grp_b" => TmMcastGrpB,
            "level1_mcast_hash" => TmLevel1McastHash,
            "level2_mcast_hash" => TmLevel2McastHash,
            "level1_exclusion_id" => TmLevel1ExclusionId,
            "level2_exclusion_id" => TmLevel2ExclusionId,
            "rid" => TmRid,
            _ => return None,
        },
        ("ingress_intrinsic_metadata_for_deparser_t", f) => match f {
            "drop_ctl" => IgDprsrDropCtl,
            "digest_type" => IgDprsrDigestType,
            "resubmit_type" => IgDprsrResubmitType,
            "mirror_type" => IgDprsrMirrorType,
            "pktgen" => IgDprsrPktgen,
            "pktgen_address" => IgDprsrPktgenAddress,
            "pktgen_length" => IgDprsrPktgenLength,
            "mirror_io_select" => IgDprsrMirrorIoSelect,
            _ => return None,
        },
        ("egress_intrinsic_metadata_t", f) => match f {
            "egress_port" => EgEgressPort,
            "enq_qdepth" => EgEnqQdepth,
            "enq_congest_stat" => EgEnqCongestStat,
            "enq_tstamp" => EgEnqTstamp,
            "deq_qdepth" => EgDeqQdepth,
            "deq_congest_stat" => EgDeqCongestStat,
            "app_pool_congest_stat" => EgAppPoolCongestStat,
            "deq_timedelta" => EgDeqTimedelta,
            "egress_rid" => EgEgressRid,
            "egress_rid_first" => EgEgressRidFirst,
            "egress_qid" => EgEgressQid,
            "egress_cos" => EgEgressCos,
            "deflection_flag" => EgDeflectionFlag,
            "pkt_length" => EgPktLength,
            _ => return None,
        },
        ("egress_intrinsic_metadata_from_parser_t", "global_tstamp") => EgPrsrGlobalTstamp,
        ("egress_intrinsic_metadata_from_parser_t", "global_ver") => EgPrsrGlobalVer,
        ("egress_intrinsic_metadata_from_parser_t", "parser_err") => EgPrsrParserErr,
        ("egress_intrinsic_metadata_for_deparser_t", f) => match f {
            "drop_ctl" => EgDprsrDropCtl,
            "mirror_type" => EgDprsrMirrorType,
            "coalesce_flush" => EgDprsrCoalesceFlush,
            "coalesce_length" => EgDprsrCoalesceLength,
            "mirror_io_select" => EgDprsrMirrorIoSelect,
            _ => return None,
        },
        ("egress_intrinsic_metadata_for_output_port_t", "capture_tstamp_on_tx") => {
            EgOportCaptureTstampOnTx
        }
        ("egress_intrinsic_metadata_for_output_port_t", "update_delay_on_tx") => {
            EgOportUpdateDelayOnTx
        }
        ("ghost_intrinsic_metadata_t", "ping_pong") => GhostPingPong,
        ("ghost_intrinsic_metadata_t", "qlength") => GhostQlength,
        ("ghost_intrinsic_metadata_t", "qid") => GhostQid,
        ("ghost_intrinsic_metadata_t", "pipe_id") => GhostPipeId,
        _ => return None,
    })
}

/// Port metadata bits after `ingress_intrinsic_metadata_t` in the ingress prefix.
/// The resubmit data a packet carries into its second pass: bf-p4c's
/// `PardeSpec::bitResubmitSize()` = `bitPhase0Size()` (`parde/parde_spec.h`: 8 bytes on Tofino
/// 1, 16 on Tofino 2, where the rest of the 24-byte port metadata region is pre-packet padding).
pub fn resubmit_bits(target: Target) -> u32 {
    match target {
        Target::Tofino1 => 64,
        Target::Tofino2 => 128,
    }
}

/// The phase-0 word `port_metadata_unpack` reads: bf-p4c's `PardeSpec::bytePhase0Size()`
/// (`parde/parde_spec.h`: 8 bytes on Tofino 1, 16 on Tofino 2), the same size as the resubmit
/// data that takes its place on a second pass.
pub fn phase0_bits(target: Target) -> u32 {
    resubmit_bits(target)
}

pub fn port_metadata_bits(target: Target) -> u32 {
    match target {
        Target::Tofino1 => 64,
        Target::Tofino2 => 192,
    }
}

/// The prefix of `gress` from the layout of its intrinsic header type `ty`.
pub fn prefix(gress: Gress, ty: &Ty, target: Target) -> PrefixLayout {
    let (Ty::Header(s) | Ty::Struct(s)) = ty else {
        return PrefixLayout::default();
    };
    let mut fields = Vec::new();
    let mut at = 0u32;
    for (name, fty) in &s.fields {
        let w = fty.scalar_width().unwrap_or(0);
        if let Some(i) = intrinsic(&s.name, name) {
            fields.push((
                i,
                FieldRef {
                    offset: at,
                    width: w,
                },
            ));
        }
        at += u32::from(w);
    }
    let extra = match gress {
        Gress::Ingress => port_metadata_bits(target),
        Gress::Egress => 0,
    };
    PrefixLayout {
        bytes: (at + extra).div_ceil(8),
        fields,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::types::StructTy;
    use std::rc::Rc;

    #[test]
    fn ingress_prefix_has_port_metadata() {
        let s = Rc::new(StructTy {
            name: "ingress_intrinsic_metadata_t".into(),
            fields: vec![
                ("resubmit_flag".into(), Ty::Bit(1)),
                ("_pad1".into(), Ty::Bit(1)),
                ("packet_version".into(), Ty::Bit(2)),
                ("_pad2".into(), Ty::Bit(3)),
                ("ingress_port".into(), Ty::Bit(9)),
                ("ingress_mac_tstamp".into(), Ty::Bit(48)),
            ],
            union: false,
        });
        let p = prefix(Gress::Ingress, &Ty::Header(s.clone()), Target::Tofino1);
        assert_eq!(p.bytes, 16);
        assert!(p.fields.contains(&(
            Intrinsic::IgIngressPort,
            FieldRef {
                offset: 7,
                width: 9
            }
        )));
        assert_eq!(
            prefix(Gress::Ingress, &Ty::Header(s), Target::Tofino2).bytes,
            32
        );
        assert_eq!(
            intrinsic("ingress_intrinsic_metadata_for_tm_t", "mcast_grp_a"),
            Some(Intrinsic::TmMcastGrpA)
        );
        assert_eq!(
            intrinsic("ingress_intrinsic_metadata_for_tm_t", "bogus"),
            None
        );
    }
}
