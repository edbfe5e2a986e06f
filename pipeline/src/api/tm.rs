//! Traffic-manager verbs: multicast groups, L1 nodes, L2 pruning and LAGs (`$pre.*`), mirror
//! sessions (`$mirror.cfg`), per-port queue / ECN / rate settings, port metadata, and the
//! digest queue.

use super::ApiError;
use crate::switch::{phase0_bytes, port_pipe, DigestMessage, Switch, PORT_MD_MAX};
use crate::tm::mirror::{MirrorSession, MirrorSessions};
use crate::tm::pre::Pre;
use crate::tm::qid_map::PortQueues;
use crate::tm::queue::{EgressQueue, QueueConfig, QueueStats};

impl Switch {
    /// A port of this switch: on one of its pipes, and one of the pipe's ports 0–71.
    pub fn check_port(&self, port: u16) -> Result<(), ApiError> {
        if !crate::devport::is_port(port) || port_pipe(port) as usize >= self.pipes.len() {
            return Err(ApiError::BadPort { port });
        }
        Ok(())
    }

    /// The PRE's configuration (read-only view).
    pub fn pre(&self) -> &Pre {
        &self.pre
    }

    pub fn mc_group_create(&mut self, mgid: u16) -> Result<(), ApiError> {
        Ok(self.pre.group_create(mgid)?)
    }

    pub fn mc_group_destroy(&mut self, mgid: u16) -> Result<(), ApiError> {
        Ok(self.pre.group_destroy(mgid)?)
    }

    /// Create an L1 node with its RID, dev ports and LAG ids.
    pub fn mc_node_create(
        &mut self,
        node: u32,
        rid: u16,
        ports: &[u16],
        lags: &[u8],
    ) -> Result<(), ApiError> {
        for p in ports {
            self.check_port(*p)?;
        }
        Ok(self.pre.node_create(node, rid, ports, lags)?)
    }

    pub fn mc_node_update(
        &mut self,
        node: u32,
        rid: u16,
        ports: &[u16],
        lags: &[u8],
    ) -> Result<(), ApiError> {
        for p in ports {
            self.check_port(*p)?;
        }
        Ok(self.pre.node_update(node, rid, ports, lags)?)
    }

    pub fn mc_node_destroy(&mut self, node: u32) -> Result<(), ApiError> {
        Ok(self.pre.node_destroy(node)?)
    }

    /// Add an L1 node to a group, with an optional L1 exclusion id.
    pub fn mc_group_add_node(
        &mut self,
        mgid: u16,
        node: u32,
        l1_xid: Option<u16>,
    ) -> Result<(), ApiError> {
        Ok(self.pre.group_add_node(mgid, node, l1_xid)?)
    }

    pub fn mc_group_remove_node(&mut self, mgid: u16, node: u32) -> Result<(), ApiError> {
        Ok(self.pre.group_remove_node(mgid, node)?)
    }

    /// Set the ports pruned for L2 exclusion id `xid` (`$pre.prune`).
    pub fn mc_prune_set(&mut self, xid: u16, ports: &[u16]) -> Result<(), ApiError> {
        Ok(self.pre.prune_set(xid, ports)?)
    }

    /// Set the member ports of a LAG (`$pre.lag`).
    pub fn mc_lag_set(&mut self, lag: u8, ports: &[u16]) -> Result<(), ApiError> {
        for p in ports {
            self.check_port(*p)?;
        }
        Ok(self.pre.lag_set(lag, ports)?)
    }

    /// Mirror sessions (read-only view).
    pub fn mirror_sessions(&self) -> &MirrorSessions {
        &self.mirror
    }

    /// Create or replace a mirror session.
    pub fn mirror_session_set(&mut self, id: u16, session: MirrorSession) -> Result<(), ApiError> {
        Ok(self.mirror.configure(id, session)?)
    }

    pub fn mirror_session_delete(&mut self, id: u16) -> Result<(), ApiError> {
        self.mirror.delete(id)?;
        Ok(())
    }

    pub fn mirror_session_enable(&mut self, id: u16, enabled: bool) -> Result<(), ApiError> {
        Ok(self.mirror.set_enabled(id, enabled)?)
    }

    /// Replace a port's queue settings (rate, capacity, ECN); the queue starts empty.
    pub fn port_queue_set(&mut self, port: u16, cfg: QueueConfig) -> Result<(), ApiError> {
        self.check_port(port)?;
        let q = EgressQueue::for_target(cfg, self.prog.target)
            .map_err(|error| ApiError::Queue { port, error })?;
        self.queues[port as usize] = q;
        Ok(())
    }

    /// Set a port's queue count and its qid → queue map (`map[qid]`; qids past its end take
    /// `qid % count`), as the SDE's `bf_tm_port_q_mapping_set`.
    pub fn port_queue_map_set(
        &mut self,
        port: u16,
        count: u16,
        map: &[u16],
    ) -> Result<(), ApiError> {
        self.check_port(port)?;
        let pq = PortQueues::new(self.prog.target, count, map)
            .map_err(|error| ApiError::QueueMap { port, error })?;
        self.port_queues[port as usize] = pq;
        Ok(())
    }

    /// A port's queue count and map.
    pub fn port_queue_map(&self, port: u16) -> Result<PortQueues, ApiError> {
        self.check_port(port)?;
        Ok(self.port_queues[port as usize])
    }

    /// A port's queue counters.
    pub fn port_queue_stats(&self, port: u16) -> Result<QueueStats, ApiError> {
        self.check_port(port)?;
        Ok(*self.queues[port as usize].stats())
    }

    /// Set the port metadata the ingress parser sees for `port` (`port_metadata_unpack`): the
    /// chip's phase-0 word, first byte first, 8 bytes on Tofino 1 and 16 on Tofino 2
    /// ([`phase0_bytes`]); a shorter `md` fills the word's first bytes, the rest 0.
    pub fn port_metadata_set(&mut self, port: u16, md: &[u8]) -> Result<(), ApiError> {
        self.check_port(port)?;
        let max = phase0_bytes(self.prog.target);
        if md.len() > max {
            return Err(ApiError::PortMetadataTooLong {
                port,
                bytes: md.len(),
                max,
            });
        }
        let mut word = [0u8; PORT_MD_MAX];
        word[..md.len()].copy_from_slice(md);
        self.port_md[port as usize] = word;
        Ok(())
    }

    /// Take every queued Tofino 2 deparser trigger for the packet generator (oldest first):
    /// hand them to [`crate::pktgen::Pktgen::deparser_trigger`].
    pub fn pktgen_trigger_drain(&mut self) -> Vec<crate::pktgen::DeparserTrigger> {
        self.pktgen_triggers.drain(..).collect()
    }

    /// Take every queued digest message (oldest first).
    pub fn digest_drain(&mut self) -> Vec<DigestMessage> {
        self.digests.drain(..).collect()
    }
}
