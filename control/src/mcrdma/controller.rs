//! [`Controller`]: MC-RDMA's switch control plane over a whole fabric. It runs Algorithm 1 for
//! a group the CMD set up and writes the result into the switches (replication where the plan
//! says, guards on the receivers' ToRs, ACK merge state on the sender's ToR); it redoes the
//! replication when routes change (a link went down) and when a receiver leaves or joins.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use pipeline::api::PipeSel;
use pipeline::ir::Value;
use pipeline::switch::Switch;

use super::agent::{merge_slots, slot_register, SwitchState};
use super::bifurcation::{bifurcation, Fabric, Plan, SwitchId};
use super::spec::{GroupKey, GroupSpec, ReceiverSpec};
use super::McError;

/// The switches a controller programs, by fabric index.
pub trait Switches {
    fn switch_mut(&mut self, s: SwitchId) -> &mut Switch;
}

impl Switches for Vec<Switch> {
    fn switch_mut(&mut self, s: SwitchId) -> &mut Switch {
        &mut self[s]
    }
}

#[derive(Debug, Clone)]
struct Group {
    spec: GroupSpec,
    plan: Plan,
}

/// The groups of a fabric and what each switch holds for them.
#[derive(Debug, Default)]
pub struct Controller {
    switches: BTreeMap<SwitchId, SwitchState>,
    groups: BTreeMap<GroupKey, Group>,
}

/// PSN `psn` as a merge register holds it.
fn reg(psn: u32) -> Value {
    Value::from(psn & 0xFF_FFFF) << 8
}

impl Controller {
    pub fn new() -> Controller {
        Controller::default()
    }

    /// The group's spec and current plan.
    pub fn group(&self, key: GroupKey) -> Option<(&GroupSpec, &Plan)> {
        self.groups.get(&key).map(|g| (&g.spec, &g.plan))
    }

    /// Receiver slots of the sender's ToR (what `mcrdma.p4` was compiled with).
    pub fn slots(fabric: &dyn Fabric, sws: &mut dyn Switches, sender: Ipv4Addr) -> Option<usize> {
        let t = fabric.tor_of(sender)?;
        Some(merge_slots(sws.switch_mut(t)))
    }

    /// Sets a group up (§IV-A, step 3 of the CMD): Algorithm 1, then the switches. Every QP of
    /// the group starts at `spec.psn`.
    pub fn create(
        &mut self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
        spec: GroupSpec,
    ) -> Result<(), McError> {
        if self.groups.contains_key(&spec.key) {
            return Err(McError::Exists(spec.key));
        }
        let acked = vec![reg(spec.psn.wrapping_sub(1)); spec.receivers.len()];
        self.install(fabric, sws, spec, &acked)
    }

    /// Algorithm 1 and every switch's share; `acked` is each receiver's merge register.
    fn install(
        &mut self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
        spec: GroupSpec,
        acked: &[Value],
    ) -> Result<(), McError> {
        let plan = bifurcation(
            fabric,
            spec.key.sender,
            spec.address,
            spec.key.mc_id,
            &spec.dsts(),
        )?;
        let tor = |ip| fabric.tor_of(ip).ok_or(McError::NoTor(ip));
        let sender_tor = tor(spec.key.sender)?;
        if !fabric.programmable(sender_tor) {
            return Err(McError::NotProgrammable(fabric.name(sender_tor)));
        }
        self.state(sender_tor)
            .install_merge(sws.switch_mut(sender_tor), &spec, acked)?;
        let mut guards: BTreeMap<SwitchId, Vec<(Ipv4Addr, u32)>> = BTreeMap::new();
        guards
            .entry(tor(spec.address)?)
            .or_default()
            .push((spec.address, spec.key.mc_id));
        for r in &spec.receivers {
            guards.entry(tor(r.ip)?).or_default().push((r.ip, r.qpn));
        }
        for (s, g) in guards {
            if fabric.programmable(s) {
                self.state(s)
                    .install_guards(sws.switch_mut(s), spec.key, &g)?;
            }
        }
        self.install_plan(fabric, sws, &spec, &plan)?;
        self.groups.insert(spec.key, Group { spec, plan });
        Ok(())
    }

    fn state(&mut self, s: SwitchId) -> &mut SwitchState {
        self.switches.entry(s).or_default()
    }

    fn install_plan(
        &mut self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
        spec: &GroupSpec,
        plan: &Plan,
    ) -> Result<(), McError> {
        for r in &plan.rules {
            let mac = fabric.mac(r.switch);
            self.state(r.switch)
                .install_replication(sws.switch_mut(r.switch), spec, r, mac)?;
        }
        Ok(())
    }

    fn remove_plan(
        &mut self,
        sws: &mut dyn Switches,
        key: GroupKey,
        plan: &Plan,
    ) -> Result<(), McError> {
        for r in &plan.rules {
            self.state(r.switch)
                .remove_replication(sws.switch_mut(r.switch), key)?;
        }
        Ok(())
    }

    /// Removes everything of `key`; returns each receiver's merge register.
    fn uninstall(
        &mut self,
        sws: &mut dyn Switches,
        key: GroupKey,
    ) -> Result<(GroupSpec, Vec<(Ipv4Addr, Value)>), McError> {
        let g = self.groups.remove(&key).ok_or(McError::NoGroup(key))?;
        self.remove_plan(sws, key, &g.plan)?;
        let mut acked = Vec::new();
        let ids: Vec<SwitchId> = self.switches.keys().copied().collect();
        for s in ids {
            let st = self.state(s);
            st.remove_guards(sws.switch_mut(s), key)?;
            acked.extend(st.remove_merge(sws.switch_mut(s), key, g.spec.sender_qpn)?);
            st.forget(key);
        }
        Ok((g.spec, acked))
    }

    /// Tears a group down.
    pub fn remove(&mut self, sws: &mut dyn Switches, key: GroupKey) -> Result<(), McError> {
        self.uninstall(sws, key).map(|_| ())
    }

    /// Receiver `ip` leaves the group: the others keep their merge state (their last ACKs), the
    /// plan is recomputed without it; the sender's QP is untouched.
    pub fn leave(
        &mut self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
        key: GroupKey,
        ip: Ipv4Addr,
    ) -> Result<(), McError> {
        let g = self.groups.get(&key).ok_or(McError::NoGroup(key))?;
        if !g.spec.receivers.iter().any(|r| r.ip == ip) {
            return Err(McError::NoReceiver(key, ip));
        }
        if g.spec.receivers.len() == 1 {
            return Err(McError::LastReceiver(key));
        }
        let (mut spec, acked) = self.uninstall(sws, key)?;
        spec.receivers.retain(|r| r.ip != ip);
        let kept = kept_registers(&spec, &acked);
        self.install(fabric, sws, spec, &kept)
    }

    /// A receiver (re-)joins with a new QP whose expected PSN is `psn`, which must be the PSN
    /// the sender sends next (see [`Controller::next_psn`] once the sender is idle).
    pub fn join(
        &mut self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
        key: GroupKey,
        receiver: ReceiverSpec,
        psn: u32,
    ) -> Result<(), McError> {
        let g = self.groups.get(&key).ok_or(McError::NoGroup(key))?;
        if g.spec.receivers.iter().any(|r| r.ip == receiver.ip) {
            return Err(McError::AlreadyMember(key, receiver.ip));
        }
        let (mut spec, acked) = self.uninstall(sws, key)?;
        spec.receivers.push(receiver);
        let mut kept = kept_registers(&spec, &acked);
        *kept.last_mut().expect("a receiver was pushed") = reg(psn.wrapping_sub(1));
        self.install(fabric, sws, spec, &kept)
    }

    /// The PSN every receiver of `key` has acknowledged the sender up to, plus one: what the
    /// sender sends next once nothing is in flight (read from the sender's ToR).
    pub fn next_psn(
        &self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
        key: GroupKey,
    ) -> Result<u32, McError> {
        let g = self.groups.get(&key).ok_or(McError::NoGroup(key))?;
        let t = fabric
            .tor_of(key.sender)
            .ok_or(McError::NoTor(key.sender))?;
        let sw = sws.switch_mut(t);
        let index = self
            .switches
            .get(&t)
            .and_then(|st| st.merge_index(key))
            .ok_or(McError::NoGroup(key))?;
        let mut min: Option<u32> = None;
        for slot in 0..g.spec.receivers.len() {
            let v = sw.register_read(PipeSel::All, &slot_register(slot), u32::from(index))?;
            let psn = v.first().map_or(0, |c| (c.lo >> 8) as u32);
            min = Some(match min {
                // PSNs are ordered modulo 2^24.
                Some(m) if (psn.wrapping_sub(m) & 0x80_0000) == 0 => m,
                _ => psn,
            });
        }
        Ok(min.unwrap_or(g.spec.psn).wrapping_add(1) & 0xFF_FFFF)
    }

    /// Re-runs Algorithm 1 for every group after a route change; rewrites the replication of
    /// the groups whose plan changed. Returns how many changed.
    pub fn reroute(
        &mut self,
        fabric: &dyn Fabric,
        sws: &mut dyn Switches,
    ) -> Result<usize, McError> {
        let keys: Vec<GroupKey> = self.groups.keys().copied().collect();
        let mut changed = 0;
        for key in keys {
            let g = self.groups[&key].clone();
            let plan = bifurcation(
                fabric,
                key.sender,
                g.spec.address,
                key.mc_id,
                &g.spec.dsts(),
            )?;
            if plan != g.plan {
                self.remove_plan(sws, key, &g.plan)?;
                self.install_plan(fabric, sws, &g.spec, &plan)?;
                self.groups.get_mut(&key).expect("listed").plan = plan;
                changed += 1;
            }
        }
        Ok(changed)
    }
}

/// The merge registers of `spec`'s receivers, from what they held (a receiver not listed in
/// `acked` gets 0 and is overwritten by the caller).
fn kept_registers(spec: &GroupSpec, acked: &[(Ipv4Addr, Value)]) -> Vec<Value> {
    spec.receivers
        .iter()
        .map(|r| {
            acked
                .iter()
                .find(|(ip, _)| *ip == r.ip)
                .map_or(0, |(_, v)| *v)
        })
        .collect()
}
