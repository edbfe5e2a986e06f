//! One switch's share of MC-RDMA's control plane: the table entries, PRE nodes and registers
//! of `mcrdma.p4` that a group needs on that switch, written and removed with the runtime API,
//! and the identifiers (multicast group ids, RIDs, merge indexes) it hands out.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use pipeline::api::PipeSel;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;

use super::bifurcation::SwitchRules;
use super::spec::{GroupKey, GroupSpec};
use super::McError;
use crate::value::{ipv4_value, mac_value};

const MC_GROUP: &str = "SwitchIngress.mc_group";
const RX_GUARD: &str = "SwitchIngress.rx_guard";
const MC_COPY: &str = "SwitchEgress.mc_copy";
const MC_VA: &str = "SwitchEgress.mc_va";
const ACK_MEMBER: &str = "SwitchEgress.ack_member";

/// mcrdma.p4's sizes: PRE groups counted per group id (`replicated`, 4096 cells), copies
/// (`mc_copy`, 16384 entries), merge indexes (the `acked<k>` registers, 4096 cells).
const MAX_MGID: u16 = 4095;
const MAX_RID: u16 = 16383;
const MAX_MERGE_INDEX: u16 = 4095;

/// The merge register of slot `k`.
pub fn slot_register(k: usize) -> String {
    format!("SwitchEgress.acked{k}")
}

/// What one group holds on one switch.
#[derive(Debug, Clone, Default)]
struct Installed {
    mgid: Option<u16>,
    rids: Vec<u16>,
    /// `mc_va` entries: RID and the range of sender VAs.
    translations: Vec<(u16, u64, u64)>,
    guards: Vec<(Ipv4Addr, u32)>,
    /// The merge index and the members' addresses, slot by slot (the sender's ToR only).
    merge: Option<(u16, Vec<Ipv4Addr>)>,
}

/// One switch: what each group installed there and the identifiers in use.
#[derive(Debug, Default)]
pub struct SwitchState {
    mgids: BTreeSet<u16>,
    rids: BTreeSet<u16>,
    merge_indexes: BTreeSet<u16>,
    groups: BTreeMap<GroupKey, Installed>,
}

/// The lowest free identifier from 1 up to `max`.
fn allocate(used: &mut BTreeSet<u16>, max: u16, what: &'static str) -> Result<u16, McError> {
    let id = (1..=max)
        .find(|i| !used.contains(i))
        .ok_or(McError::OutOfIds(what))?;
    used.insert(id);
    Ok(id)
}

fn exact(v: Value) -> KeyMatch {
    KeyMatch::Exact(v)
}

/// Receiver slots `mcrdma.p4` was compiled with (its `acked<k>` registers).
pub fn merge_slots(sw: &Switch) -> usize {
    (0..)
        .take_while(|k| sw.register_size(&slot_register(*k)).is_ok())
        .count()
}

impl SwitchState {
    /// Writes the replication rules of `rules` for `spec`: the PRE group with one node per
    /// branch, `mc_copy` (and `mc_va` for a receiver) per RID, and `mc_group` last, so packets
    /// are replicated only once every copy can be addressed.
    pub fn install_replication(
        &mut self,
        sw: &mut Switch,
        spec: &GroupSpec,
        rules: &SwitchRules,
        router_mac: [u8; 6],
    ) -> Result<(), McError> {
        let smac = mac_value(router_mac);
        let mgid = allocate(&mut self.mgids, MAX_MGID, "multicast group ids")?;
        let inst = self.groups.entry(spec.key).or_default();
        inst.mgid = Some(mgid);
        sw.mc_group_create(mgid)?;
        for b in &rules.branches {
            let rid = allocate(&mut self.rids, MAX_RID, "replication ids")?;
            let inst = self.groups.entry(spec.key).or_default();
            inst.rids.push(rid);
            sw.mc_node_create(u32::from(rid), rid, &[b.port], &[])?;
            sw.mc_group_add_node(mgid, u32::from(rid), None)?;
            let key = [("eg_intr_md.egress_rid", exact(Value::from(rid)))];
            match b.receiver {
                None => sw.table_add(
                    PipeSel::All,
                    MC_COPY,
                    &key,
                    None,
                    "to_branch",
                    &[
                        ("ip", ipv4_value(b.dst)),
                        ("smac", smac),
                        ("dmac", mac_value(b.dmac)),
                    ],
                )?,
                Some(i) => {
                    let r = &spec.receivers[i];
                    sw.table_add(
                        PipeSel::All,
                        MC_COPY,
                        &key,
                        None,
                        "to_receiver",
                        &[
                            ("ip", ipv4_value(b.dst)),
                            ("smac", smac),
                            ("dmac", mac_value(b.dmac)),
                            ("qpn", Value::from(r.qpn)),
                        ],
                    )?;
                    let t = add_translation(sw, rid, spec, r.va, r.rkey)?;
                    self.groups
                        .entry(spec.key)
                        .or_default()
                        .translations
                        .push(t);
                }
            }
        }
        sw.table_add(
            PipeSel::All,
            MC_GROUP,
            &[
                ("hdr.ipv4.src_addr", exact(ipv4_value(spec.key.sender))),
                ("hdr.bth.dst_qp", exact(Value::from(spec.key.mc_id))),
            ],
            None,
            "replicate",
            &[("mgid", Value::from(mgid))],
        )?;
        Ok(())
    }

    /// Removes what [`SwitchState::install_replication`] wrote for `key` (nothing if none).
    pub fn remove_replication(&mut self, sw: &mut Switch, key: GroupKey) -> Result<(), McError> {
        let Some(inst) = self.groups.get_mut(&key) else {
            return Ok(());
        };
        let Some(mgid) = inst.mgid.take() else {
            return Ok(());
        };
        sw.table_delete(
            PipeSel::All,
            MC_GROUP,
            &[
                ("hdr.ipv4.src_addr", exact(ipv4_value(key.sender))),
                ("hdr.bth.dst_qp", exact(Value::from(key.mc_id))),
            ],
            None,
        )?;
        for (rid, lo, hi) in std::mem::take(&mut inst.translations) {
            for key in va_keys(rid, lo, hi) {
                sw.table_delete(PipeSel::All, MC_VA, &key, Some(1))?;
            }
        }
        for rid in std::mem::take(&mut inst.rids) {
            let k = [("eg_intr_md.egress_rid", exact(Value::from(rid)))];
            sw.table_delete(PipeSel::All, MC_COPY, &k, None)?;
            sw.mc_group_remove_node(mgid, u32::from(rid))?;
            sw.mc_node_destroy(u32::from(rid))?;
            self.rids.remove(&rid);
        }
        sw.mc_group_destroy(mgid)?;
        self.mgids.remove(&mgid);
        Ok(())
    }

    /// Guards receiver QPs attached to this switch: data to `(ip, qpn)` only from the sender.
    pub fn install_guards(
        &mut self,
        sw: &mut Switch,
        key: GroupKey,
        guards: &[(Ipv4Addr, u32)],
    ) -> Result<(), McError> {
        for &(ip, qpn) in guards {
            sw.table_add(
                PipeSel::All,
                RX_GUARD,
                &guard_key(ip, qpn),
                None,
                "guard",
                &[("sender", ipv4_value(key.sender))],
            )?;
            self.groups.entry(key).or_default().guards.push((ip, qpn));
        }
        Ok(())
    }

    /// Removes the guards of `key` on this switch.
    pub fn remove_guards(&mut self, sw: &mut Switch, key: GroupKey) -> Result<(), McError> {
        let Some(inst) = self.groups.get_mut(&key) else {
            return Ok(());
        };
        for (ip, qpn) in std::mem::take(&mut inst.guards) {
            sw.table_delete(PipeSel::All, RX_GUARD, &guard_key(ip, qpn), None)?;
        }
        Ok(())
    }

    /// The ACK merge state on the sender's ToR: one `ack_member` entry per receiver (slot =
    /// its position) and each slot's register set to `acked[slot]` (PSN << 8).
    pub fn install_merge(
        &mut self,
        sw: &mut Switch,
        spec: &GroupSpec,
        acked: &[Value],
    ) -> Result<(), McError> {
        let slots = merge_slots(sw);
        if spec.receivers.len() > slots {
            return Err(McError::TooManyReceivers {
                receivers: spec.receivers.len(),
                slots,
            });
        }
        let index = allocate(&mut self.merge_indexes, MAX_MERGE_INDEX, "merge indexes")?;
        for (slot, r) in spec.receivers.iter().enumerate() {
            sw.register_write(
                PipeSel::All,
                &slot_register(slot),
                u32::from(index),
                acked[slot],
                None,
            )?;
            sw.table_add(
                PipeSel::All,
                ACK_MEMBER,
                &member_key(spec.key.sender, spec.sender_qpn, r.ip),
                None,
                "member",
                &[
                    ("group", Value::from(index)),
                    ("slot", slot as Value),
                    ("size", spec.receivers.len() as Value),
                    ("dst1", ipv4_value(spec.address)),
                ],
            )?;
        }
        let members = spec.receivers.iter().map(|r| r.ip).collect();
        self.groups.entry(spec.key).or_default().merge = Some((index, members));
        Ok(())
    }

    /// Removes the merge state of `key`; returns each member's address and register value
    /// (PSN << 8 it last acknowledged).
    pub fn remove_merge(
        &mut self,
        sw: &mut Switch,
        key: GroupKey,
        sender_qpn: u32,
    ) -> Result<Vec<(Ipv4Addr, Value)>, McError> {
        let Some((index, members)) = self.groups.get_mut(&key).and_then(|i| i.merge.take()) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (slot, ip) in members.into_iter().enumerate() {
            let v = sw.register_read(PipeSel::All, &slot_register(slot), u32::from(index))?;
            out.push((ip, v.first().map_or(0, |c| c.lo)));
            sw.table_delete(
                PipeSel::All,
                ACK_MEMBER,
                &member_key(key.sender, sender_qpn, ip),
                None,
            )?;
        }
        self.merge_indexes.remove(&index);
        Ok(out)
    }

    /// The merge index of `key` on this switch (its sender's ToR).
    pub fn merge_index(&self, key: GroupKey) -> Option<u16> {
        self.groups.get(&key)?.merge.as_ref().map(|(i, _)| *i)
    }

    /// Forgets `key` once everything of it is removed.
    pub fn forget(&mut self, key: GroupKey) {
        self.groups.remove(&key);
    }
}

fn guard_key(ip: Ipv4Addr, qpn: u32) -> [(&'static str, KeyMatch); 2] {
    [
        ("hdr.ipv4.dst_addr", exact(ipv4_value(ip))),
        ("hdr.bth.dst_qp", exact(Value::from(qpn))),
    ]
}

fn member_key(
    sender: Ipv4Addr,
    sender_qpn: u32,
    member: Ipv4Addr,
) -> [(&'static str, KeyMatch); 3] {
    [
        ("hdr.ipv4.dst_addr", exact(ipv4_value(sender))),
        ("hdr.bth.dst_qp", exact(Value::from(sender_qpn))),
        ("hdr.ipv4.src_addr", exact(ipv4_value(member))),
    ]
}

/// The `mc_va` keys of one translation: the sender's VA range `lo..=hi` (wrapping past 2^64
/// when `hi < lo`) as aligned power-of-two blocks, one ternary entry each. A Tofino's range
/// match takes keys of at most 20 bits, so a 64-bit VA range is expanded into prefixes by the
/// control plane (the paper's "TCAM ... range-based match").
fn va_keys(rid: u16, lo: u64, hi: u64) -> Vec<[(&'static str, KeyMatch); 2]> {
    let mut blocks = Vec::new();
    if hi < lo {
        prefix_blocks(lo, u64::MAX, &mut blocks);
        prefix_blocks(0, hi, &mut blocks);
    } else {
        prefix_blocks(lo, hi, &mut blocks);
    }
    blocks
        .into_iter()
        .map(|(value, mask)| {
            [
                ("eg_intr_md.egress_rid", exact(Value::from(rid))),
                (
                    "hdr.reth.va",
                    KeyMatch::Ternary {
                        value: Value::from(value),
                        mask: Value::from(mask),
                    },
                ),
            ]
        })
        .collect()
}

/// Covers `lo..=hi` with the fewest aligned blocks: (base, mask), the mask's ones the bits
/// every address of the block shares.
fn prefix_blocks(lo: u64, hi: u64, out: &mut Vec<(u64, u64)>) {
    // The last address of the block of 2^k addresses from `at` (u128: 2^64 addresses fit).
    let end = |at: u64, k: u32| u128::from(at) + (1u128 << k) - 1;
    let mut at = lo;
    loop {
        // The largest block aligned at `at` that ends at or before `hi`.
        let mut k = if at == 0 { 64 } else { at.trailing_zeros() };
        while k > 0 && end(at, k) > u128::from(hi) {
            k -= 1;
        }
        let mask = if k == 64 { 0 } else { !((1u64 << k) - 1) };
        out.push((at, mask));
        let last = end(at, k);
        if last >= u128::from(hi) {
            return;
        }
        // `last < hi <= u64::MAX`, so the next address fits.
        at = (last + 1) as u64;
    }
}

/// §IV-E: WRITEs into the sender's buffer land at the same offset in the receiver's region.
fn add_translation(
    sw: &mut Switch,
    rid: u16,
    spec: &GroupSpec,
    va: u64,
    rkey: u32,
) -> Result<(u16, u64, u64), McError> {
    let (lo, hi) = (
        spec.sender_va,
        spec.sender_va.wrapping_add(spec.len.max(1) - 1),
    );
    let params = [
        ("offset", Value::from(va.wrapping_sub(spec.sender_va))),
        ("rkey", Value::from(rkey)),
    ];
    let keys = va_keys(rid, lo, hi);
    for (i, key) in keys.iter().enumerate() {
        if let Err(e) = sw.table_add(PipeSel::All, MC_VA, key, Some(1), "translate", &params) {
            // All or nothing: the blocks added so far go again.
            for done in &keys[..i] {
                let _ = sw.table_delete(PipeSel::All, MC_VA, done, Some(1));
            }
            return Err(e.into());
        }
    }
    Ok((rid, lo, hi))
}

#[cfg(test)]
mod va_tests {
    use super::prefix_blocks;

    fn blocks(lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        prefix_blocks(lo, hi, &mut v);
        v
    }

    /// Every address of the range is in exactly one block, and no other address is.
    #[test]
    fn blocks_cover_a_range_exactly() {
        for (lo, hi) in [
            (0x1000u64, 0x1fff),
            (0x1234, 0x5678),
            (5, 5),
            (0, 0x2f),
            (0xfff0, 0x1_000f),
        ] {
            let b = blocks(lo, hi);
            for x in lo.saturating_sub(40)..=hi + 40 {
                let n = b.iter().filter(|(v, m)| x & m == *v).count();
                assert_eq!(
                    n,
                    usize::from((lo..=hi).contains(&x)),
                    "{x:#x} in {lo:#x}..={hi:#x}"
                );
            }
            assert!(b.len() <= 2 * 64, "{}", b.len());
        }
        assert_eq!(
            blocks(0x1000_0000, 0x1000_ffff),
            vec![(0x1000_0000, !0xffff)]
        );
        assert_eq!(blocks(0, u64::MAX), vec![(0, 0)]);
        assert_eq!(blocks(u64::MAX, u64::MAX), vec![(u64::MAX, u64::MAX)]);
        assert_eq!(blocks(1 << 63, u64::MAX), vec![(1 << 63, 1 << 63)]);
    }
}
