//! The P4CE switch of a lab on the in-memory driver, with its agent: the topology's switch
//! running `p4ce.p4` (among a fabric's switches, if any), the P4CE agent with its RDMA CM
//! endpoint on the switch's CPU port, told where each host hangs off the switch. Every lab
//! around a P4CE switch builds it here: the P4CE lab ([`super::Lab`]) and the Acuerdo lab's
//! switch mode (`labs::acuerdo`); hosts ask the agent for groups over RDMA CM.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use control::p4ce::{Agent, AgentConfig, Attachment, SwitchCm};
use hosts::p4ce::node::{host_ip, host_mac};
use hosts::p4ce::{SWITCH_IP, SWITCH_MAC};
use pipeline::ir::Program;
use pipeline::switch::{Switch, SwitchConfig};
use rdma::verbs::EndpointConfig;

use super::apps::AgentApp;
use super::lab::{LabError, CM_RESPONSE_TIMEOUT};
use crate::mem::{MemLab, MemLabError};
use crate::p4ce::CPU_PORT;
use crate::topology::{End, TablesSource, Topology};

/// A topology on the in-memory driver with its P4CE switch and agent.
pub struct P4ceSwitch {
    /// The driver.
    pub mem: MemLab,
    /// The agent's index on the driver.
    pub agent: usize,
    /// The P4CE switch's index in the topology.
    pub p4ce: usize,
    /// Per host: the MAC it reaches every neighbour through (the router MAC of its leaf on a
    /// fabric), or None on the P4CE switch itself.
    pub gateways: Vec<Option<[u8; 6]>>,
    /// Where leaders put the replicas they lost ([`AgentApp::lost_replicas`]).
    pub lost: Arc<Mutex<Vec<u16>>>,
}

impl P4ceSwitch {
    /// Builds `topo` (its switch with the P4CE MAC runs `program`), host `h` being P4CE
    /// endpoint `ids[h]`, and attaches the agent to the switch's CPU port.
    pub fn build(
        program: Arc<Program>,
        topo: Topology,
        ids: &[u16],
        seed: u64,
    ) -> Result<P4ceSwitch, LabError> {
        let p4ce = topo
            .switches
            .iter()
            .position(|s| s.mac == SWITCH_MAC)
            .ok_or_else(|| LabError::Config("no switch has the P4CE switch's MAC".into()))?;
        // On a fabric: the P4CE switch's one cable into it (its port, the neighbour's MAC).
        // What it sends to a host leaves there, to the neighbour's router MAC, and is routed.
        let uplink = topo.links.iter().find_map(|l| match (l.a, l.b) {
            (End::Switch { switch: a, devport }, End::Switch { switch: b, .. }) if a == p4ce => {
                Some((devport, topo.switches[b].mac))
            }
            (End::Switch { switch: a, .. }, End::Switch { switch: b, devport }) if b == p4ce => {
                Some((devport, topo.switches[a].mac))
            }
            _ => None,
        });
        let mut at = BTreeMap::new();
        let mut l2 = Vec::new();
        let mut gateways = Vec::new();
        for (h, id) in ids.iter().enumerate() {
            let (s, port) = topo
                .host_attachment(h)
                .ok_or_else(|| LabError::Config(format!("host {h} is not on a switch")))?;
            let mac = host_mac(*id);
            let (a, gw) = if s == p4ce {
                (Attachment { mac, port }, None)
            } else {
                let (port, next) = uplink.ok_or_else(|| {
                    LabError::Config(format!(
                        "host {h} is not on the P4CE switch, which has no cable to the fabric"
                    ))
                })?;
                (Attachment { mac: next, port }, Some(topo.switches[s].mac))
            };
            at.insert(host_ip(*id), a);
            if !l2.contains(&(a.mac, a.port)) {
                l2.push((a.mac, a.port));
            }
            gateways.push(gw);
        }
        let switch = Switch::new(program, SwitchConfig::new(1).with_cpu_port(CPU_PORT))?;
        let switches = if topo.switches.len() == 1 {
            vec![switch]
        } else {
            // The fabric's switches as any topology's (fabric.p4, routes generated); the P4CE
            // switch from `program` with the agent's CPU port (built as a placeholder here).
            let mut fabric = topo.clone();
            let other = usize::from(p4ce == 0);
            fabric.switches[p4ce].program = fabric.switches[other].program.clone();
            fabric.switches[p4ce].tables = TablesSource::None;
            let mut built = crate::build::switches(&fabric).map_err(MemLabError::from)?;
            built[p4ce] = switch;
            built
        };
        let mut mem = MemLab::with_switches(topo, switches)?;
        let mut ecfg = EndpointConfig::new(SWITCH_MAC, SWITCH_IP);
        ecfg.seed ^= seed.rotate_left(7);
        ecfg.cm.response_timeout = CM_RESPONSE_TIMEOUT;
        let agent = Agent::new(AgentConfig {
            switch_ip: SWITCH_IP,
            cpu_port: CPU_PORT,
        });
        let app = AgentApp::new(agent, SwitchCm::new(ecfg, at)?, l2);
        let lost = app.lost_replicas();
        let agent = mem.attach_agent(p4ce, CPU_PORT, Box::new(app));
        if let Some(e) = mem
            .agent_mut::<AgentApp>(agent)
            .and_then(|a| a.error.clone())
        {
            return Err(LabError::Config(format!("P4CE agent: {e}")));
        }
        Ok(P4ceSwitch {
            mem,
            agent,
            p4ce,
            gateways,
            lost,
        })
    }
}
