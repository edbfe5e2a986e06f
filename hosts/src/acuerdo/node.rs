//! An Acuerdo node on pisa's RDMA endpoint: the protocol ([`Core`]) over one-sided RDMA
//! WRITEs on RC QPs, one to every other node, sans I/O like the endpoint itself (frames in
//! with [`Node::handle_frame`], out with [`Node::poll_transmit`], time passed to
//! [`Node::poll`]).
//!
//! One MR per node holds, at the same offsets on every node ([`Layout`]):
//!
//! ```text
//! | incoming ring from node 0 | ... from node n-1 | Accept_SST | Commit_SST | Vote_SST |
//! | credits (n × u64) | credits out (n × u64) | outgoing buffer |
//! | group ring | group outgoing buffer | group credits (n × u64) | group credit out |  (switch mode)
//! ```
//!
//! - Rings ([`super::ring`]): the sender stages a record in its outgoing buffer and WRITEs it
//!   into the receiver's incoming ring for it; the receiver drains each ring in one batch
//!   per poll, hands every record to the core, and WRITEs how far it read into the sender's
//!   credit word for it (when it moved by an eighth of the ring), so slots are reused once
//!   taken.
//! - SSTs: a node's row of each table lives at the same place in every copy; a push is one
//!   WRITE of the own row from the local copy to a peer's.
//! - Selective signaling: one WRITE in `signal_every` per QP asks for a completion; an error
//!   completion (retries exhausted: the peer is gone) or a QP in the error state marks the
//!   peer lost, and nothing more is sent to it.
//!
//! - Switch mode (beyond the paper, [`NodeConfig::switch_timeout_ns`]): the leader's payloads
//!   go to the followers as one WRITE to a P4CE switch's group, which replicates it into every
//!   member's group ring (`node/switch.rs` has the details: the group's set-up over
//!   RDMA CM, ordering against the unicast rings, credits, the fall-back to unicast).
//!
//! Connection set-up is out of band, as in the paper (which exchanges QP numbers and keys
//! over TCP): [`Node::info`] gives what peers need, [`Node::connect`] takes theirs.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use rdma::verbs::{
    AccessFlags, CqHandle, Endpoint, Instant, MrInfo, Mtu, QpAttr, QpInitAttr, QpState, QpType,
    SendOp, SendWr, Sge, VerbsError, WcStatus,
};

use super::core::{CommitRow, Config, Core, Delivery, Output, Table};
use super::error::AcuerdoError;
use super::ring::{self, Reader, Writer};
use super::types::{MsgHdr, Pid, Vote, HDR_LEN};

mod switch;
use switch::Group;

/// Bytes of an SST row.
pub const ROW: usize = 32;

/// Node settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeConfig {
    /// The protocol's settings.
    pub core: Config,
    /// Bytes of each incoming ring (a multiple of 8).
    pub ring_bytes: usize,
    /// One WRITE in this many asks for a completion.
    pub signal_every: u32,
    /// Poll at least this often (ns) without frames arriving (timers of the protocol).
    pub poll_every_ns: u64,
    /// ACK timeout code of the QPs (4.096 µs × 2^code); 7 retries before a peer is lost.
    pub ack_timeout: u8,
    /// Switch mode: the leader broadcasts through a P4CE switch's group (the node's
    /// endpoint must reach the switch: [`crate::p4ce::node::p4ce_endpoint`]); a group WRITE
    /// not completed, or the group ring full, for this long (ns) makes it fall back to
    /// unicast. None: unicast only, as in the paper.
    pub switch_timeout_ns: Option<u64>,
}

impl NodeConfig {
    /// Node `me` of `nodes` with 1 MiB rings.
    pub fn new(me: Pid, nodes: usize) -> NodeConfig {
        let core = Config::new(me, nodes);
        NodeConfig {
            core,
            ring_bytes: 1 << 20,
            signal_every: 64,
            poll_every_ns: core.heartbeat_ns / 4,
            ack_timeout: 8,
            switch_timeout_ns: None,
        }
    }
}

/// Where things are in a node's MR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Nodes.
    pub n: usize,
    /// Bytes per ring.
    pub cap: usize,
    /// Bytes of the group ring (0: no switch mode).
    pub group: usize,
}

impl Layout {
    /// The incoming ring from node `j`.
    pub fn ring(&self, j: Pid) -> usize {
        j as usize * self.cap
    }
    /// Node `j`'s row of `t`.
    pub fn row(&self, t: Table, j: Pid) -> usize {
        let k = match t {
            Table::Accept => 0,
            Table::Commit => 1,
            Table::Vote => 2,
        };
        self.n * self.cap + (k * self.n + j as usize) * ROW
    }
    /// What node `j` took of this node's ring to it.
    pub fn credit(&self, j: Pid) -> usize {
        self.n * self.cap + 3 * self.n * ROW + 8 * j as usize
    }
    /// What this node took of node `j`'s ring (the source of its credit WRITE).
    pub fn credit_out(&self, j: Pid) -> usize {
        self.credit(0) + 8 * self.n + 8 * j as usize
    }
    /// The outgoing buffer.
    pub fn outgoing(&self) -> usize {
        self.credit(0) + 16 * self.n
    }
    /// The group ring (switch mode), written by the leader through the switch.
    pub fn group_ring(&self) -> usize {
        self.outgoing() + self.cap
    }
    /// The leader's staging buffer for the group ring.
    pub fn group_outgoing(&self) -> usize {
        self.group_ring() + self.group
    }
    /// What node `j` took of the group ring (written by `j` into the leader's MR).
    pub fn group_credit(&self, j: Pid) -> usize {
        self.group_outgoing() + self.group + 8 * j as usize
    }
    /// What this node took of the group ring (the source of its credit WRITE).
    pub fn group_credit_out(&self) -> usize {
        self.group_credit(0) + 8 * self.n
    }
    /// Bytes of the MR.
    pub fn len(&self) -> usize {
        if self.group == 0 {
            self.outgoing() + self.cap
        } else {
            self.group_credit_out() + 8
        }
    }
    /// Whether the MR is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What peers need to reach a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// Its id.
    pub id: Pid,
    /// Its address.
    pub ip: Ipv4Addr,
    /// Its QP towards each node (index = node id; its own entry unused).
    pub qpns: Vec<u32>,
    /// Its MR's address.
    pub addr: u64,
    /// Its MR's R_key.
    pub rkey: u32,
}

/// Counters of the RDMA side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct NodeStats {
    /// WRITEs posted.
    pub writes: u64,
    /// Ring records taken.
    pub records: u64,
    /// Batches (polls that took at least one record from a ring).
    pub batches: u64,
    /// Times a ring to a peer was full (the message waits in the backlog).
    pub ring_full: u64,
    /// Credit WRITEs.
    pub credits: u64,
    /// Peers lost (error completion or QP error).
    pub lost_peers: u64,
    /// Messages too big for a ring, not sent.
    pub too_big: u64,
    /// WRITEs posted to the switch's group (switch mode).
    pub switch_writes: u64,
    /// Records taken from the group ring.
    pub group_records: u64,
    /// Groups the switch set up for this node as leader.
    pub groups: u64,
    /// Group requests the switch refused or did not answer.
    pub group_refusals: u64,
    /// Fall-backs from the switch to unicast (error completion or timeout).
    pub fallbacks: u64,
    /// Records dropped as already accepted (sent both ways around a fall-back).
    pub duplicates: u64,
}

/// Messages waiting for ring space to one peer, most.
const MAX_BACKLOG: usize = 1 << 20;

fn psn(from: Pid, to: Pid) -> u32 {
    0x1000 + from * 64 + to
}

/// An Acuerdo node on an RDMA endpoint (see the module docs).
pub struct Node {
    /// The protocol.
    pub core: Core,
    ep: Endpoint,
    cfg: NodeConfig,
    lay: Layout,
    mr: MrInfo,
    cq: CqHandle,
    qps: Vec<u32>,
    peers: Vec<Option<(u64, u32)>>,
    down: Vec<bool>,
    writers: Vec<Writer>,
    backlog: Vec<VecDeque<Arc<Vec<u8>>>>,
    readers: Vec<Reader>,
    credit_sent: Vec<u64>,
    pending: Vec<[bool; 3]>,
    posted: Vec<u32>,
    /// Switch mode's state.
    group: Option<Group>,
    /// Every node's address (from [`Node::connect`]).
    ips: Vec<Ipv4Addr>,
    next_poll: u64,
    now: u64,
    stats: NodeStats,
}

fn t_index(t: Table) -> usize {
    match t {
        Table::Accept => 0,
        Table::Commit => 1,
        Table::Vote => 2,
    }
}

impl Node {
    /// Builds the node's MR, CQ and one RC QP per peer on `ep`.
    pub fn new(cfg: NodeConfig, mut ep: Endpoint) -> Result<Node, AcuerdoError> {
        let core = Core::new(cfg.core)?;
        let n = cfg.core.nodes;
        if cfg.ring_bytes < 256 || !cfg.ring_bytes.is_multiple_of(8) || cfg.signal_every == 0 {
            return Err(AcuerdoError::Config(format!(
                "ring of {} bytes (at least 256, a multiple of 8), signal every {}",
                cfg.ring_bytes, cfg.signal_every
            )));
        }
        let lay = Layout {
            n,
            cap: cfg.ring_bytes,
            group: if cfg.switch_timeout_ns.is_some() {
                cfg.ring_bytes
            } else {
                0
            },
        };
        let pd = ep.alloc_pd();
        let mr = ep.reg_mr(pd, lay.len(), AccessFlags::ALL)?;
        let cq = ep.create_cq(1 << 16);
        let mut qps = vec![u32::MAX; n];
        for (j, q) in qps.iter_mut().enumerate() {
            if j as Pid != cfg.core.me {
                *q = ep.create_qp(QpInitAttr {
                    pd,
                    qp_type: QpType::Rc,
                    send_cq: cq,
                    recv_cq: cq,
                    max_send_wr: 1 << 16,
                    max_recv_wr: 1,
                })?;
            }
        }
        let group = match cfg.switch_timeout_ns {
            Some(t) => Some(Group::new(&mut ep, pd, cq, t, n, cfg.ring_bytes)?),
            None => None,
        };
        Ok(Node {
            core,
            ep,
            group,
            ips: vec![Ipv4Addr::UNSPECIFIED; n],
            cfg,
            lay,
            mr,
            cq,
            qps,
            peers: vec![None; n],
            down: vec![false; n],
            writers: vec![Writer::new(cfg.ring_bytes); n],
            backlog: vec![VecDeque::new(); n],
            readers: vec![Reader::default(); n],
            credit_sent: vec![0; n],
            pending: vec![[false; 3]; n],
            posted: vec![0; n],
            next_poll: 0,
            now: 0,
            stats: NodeStats::default(),
        })
    }

    /// What peers need to connect to this node.
    pub fn info(&self) -> PeerInfo {
        PeerInfo {
            id: self.cfg.core.me,
            ip: self.ep.config().device.ipv4,
            qpns: self.qps.clone(),
            addr: self.mr.addr,
            rkey: self.mr.rkey,
        }
    }

    /// Connects this node's QP to every peer in `infos` (all nodes, this one included).
    pub fn connect(&mut self, infos: &[PeerInfo]) -> Result<(), AcuerdoError> {
        let me = self.cfg.core.me;
        for p in infos.iter().filter(|p| p.id != me) {
            let j = p.id as usize;
            if j >= self.qps.len() || p.qpns.len() != self.qps.len() {
                return Err(AcuerdoError::Config(format!(
                    "peer {} of {}",
                    p.id,
                    self.qps.len()
                )));
            }
            let qpn = self.qps[j];
            let attrs = [
                QpAttr {
                    state: Some(QpState::Init),
                    access: Some(AccessFlags::REMOTE_WRITE),
                    ..Default::default()
                },
                QpAttr {
                    state: Some(QpState::Rtr),
                    path_mtu: Some(Mtu::M1024),
                    dest_qp_num: Some(p.qpns[me as usize]),
                    remote_ip: Some(IpAddr::V4(p.ip)),
                    rq_psn: Some(psn(p.id, me)),
                    min_rnr_timer: Some(1),
                    ..Default::default()
                },
                QpAttr {
                    state: Some(QpState::Rts),
                    sq_psn: Some(psn(me, p.id)),
                    timeout: Some(self.cfg.ack_timeout),
                    retry_cnt: Some(7),
                    rnr_retry: Some(7),
                    ..Default::default()
                },
            ];
            for a in &attrs {
                self.ep.modify_qp(qpn, a)?;
            }
            self.peers[j] = Some((p.addr, p.rkey));
            self.ips[j] = p.ip;
        }
        Ok(())
    }

    /// Settings.
    pub fn config(&self) -> &NodeConfig {
        &self.cfg
    }
    /// Counters.
    pub fn stats(&self) -> NodeStats {
        self.stats
    }
    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }
    /// The endpoint, to register more memory on it (the replicated hash table's).
    pub fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.ep
    }
    /// Whether node `j` was lost (its QP failed).
    pub fn lost(&self, j: Pid) -> bool {
        self.down.get(j as usize).copied().unwrap_or(true)
    }

    /// A frame arrived.
    pub fn handle_frame(&mut self, now_ns: u64, frame: &[u8]) {
        self.ep.handle_frame(Instant::from_nanos(now_ns), frame);
    }

    /// The next frame to send.
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<Vec<u8>> {
        self.ep.poll_transmit(Instant::from_nanos(now_ns))
    }

    /// When the node next needs [`Node::poll`] without a frame arriving.
    pub fn next_wakeup(&self) -> Option<u64> {
        let ep = self.ep.poll_timeout().map(|t| t.as_nanos());
        let mut t = ep.map_or(self.next_poll, |t| t.min(self.next_poll));
        if let Some(c) = self.core.commit_push_at() {
            t = t.min(c.max(self.now));
        }
        Some(t)
    }

    /// The client API (the leader only): broadcasts `payload`; its header orders it, and
    /// [`Node::poll_delivery`] gives its committed position.
    pub fn broadcast(&mut self, payload: Vec<u8>) -> Result<MsgHdr, AcuerdoError> {
        let h = self.core.broadcast(payload)?;
        self.flush()?;
        Ok(h)
    }

    /// The next message this node delivered, in order.
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        self.core.poll_delivery()
    }

    /// The NIC alone at `now_ns`, while the node's CPU is stalled (descheduled, paused): the
    /// endpoint keeps answering (incoming WRITEs land in memory and are acknowledged, its
    /// timers run), the protocol does nothing until the next [`Node::poll`].
    pub fn nic_only(&mut self, now_ns: u64) {
        let t = Instant::from_nanos(now_ns);
        if self.ep.poll_timeout().is_some_and(|d| d <= t) {
            self.ep.handle_timeout(t);
        }
    }

    /// Runs at `now_ns`: the endpoint's timers, completions, the SSTs, the rings (one batch
    /// each), the protocol's tick, and what it sends. Returns whether it took any record.
    pub fn poll(&mut self, now_ns: u64) -> Result<bool, AcuerdoError> {
        self.now = now_ns;
        let t = Instant::from_nanos(now_ns);
        if self.ep.poll_timeout().is_some_and(|d| d <= t) {
            self.ep.handle_timeout(t);
        }
        self.completions()?;
        self.switch_cm(now_ns)?;
        self.read_tables()?;
        let mut took = self.drain_rings()?;
        took |= self.drain_group()?;
        self.core.tick(now_ns);
        self.switch_watch(now_ns)?;
        self.flush()?;
        if now_ns >= self.next_poll {
            self.next_poll = now_ns + self.cfg.poll_every_ns;
        }
        Ok(took)
    }

    fn lose(&mut self, j: usize) {
        if !self.down[j] {
            self.down[j] = true;
            self.backlog[j].clear();
            self.stats.lost_peers += 1;
        }
    }

    fn completions(&mut self) -> Result<(), AcuerdoError> {
        loop {
            let wcs = self.ep.poll_cq(self.cq, 256)?;
            if wcs.is_empty() {
                return Ok(());
            }
            for wc in wcs {
                if self.switch_completion(&wc)? {
                    continue;
                }
                if wc.status != WcStatus::Success {
                    if let Some(j) = self.qps.iter().position(|q| *q == wc.qp_num) {
                        self.lose(j);
                    }
                }
            }
        }
    }

    fn read_tables(&mut self) -> Result<(), AcuerdoError> {
        let me = self.cfg.core.me;
        let mem = self.ep.mr_bytes(self.mr.lkey)?;
        for j in 0..self.lay.n as Pid {
            if j == me {
                continue;
            }
            let a = self.lay.row(Table::Accept, j);
            self.core.set_accept(j, MsgHdr::get(&mem[a..a + HDR_LEN]));
            let c = self.lay.row(Table::Commit, j);
            let mut hb = [0u8; 8];
            hb.copy_from_slice(&mem[c + HDR_LEN..c + HDR_LEN + 8]);
            self.core.set_commit(
                j,
                CommitRow {
                    committed: MsgHdr::get(&mem[c..]),
                    hb: u64::from_le_bytes(hb),
                },
            );
            let v = self.lay.row(Table::Vote, j);
            self.core.set_vote(j, Vote::get(&mem[v..]));
            let k = self.lay.credit(j);
            let mut w = [0u8; 8];
            w.copy_from_slice(&mem[k..k + 8]);
            self.writers[j as usize].set_credit(u64::from_le_bytes(w));
        }
        self.read_group_credits()?;
        Ok(())
    }

    fn drain_rings(&mut self) -> Result<bool, AcuerdoError> {
        let me = self.cfg.core.me;
        let mut took = false;
        for j in 0..self.lay.n as Pid {
            if j == me {
                continue;
            }
            let at = self.lay.ring(j);
            let mut batch = 0;
            loop {
                let mem = self.ep.mr_bytes_mut(self.mr.lkey)?;
                let ring = &mut mem[at..at + self.lay.cap];
                match self.readers[j as usize].take(ring) {
                    Ok(Some(body)) => {
                        if self.duplicate(&body) {
                            self.stats.duplicates += 1;
                        } else {
                            self.core.receive(j, &body);
                        }
                        batch += 1;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        // A peer that writes garbage is a peer lost.
                        self.lose(j as usize);
                        return Err(AcuerdoError::Malformed(format!("ring from node {j}: {e}")));
                    }
                }
            }
            if batch > 0 {
                took = true;
                self.stats.records += batch;
                self.stats.batches += 1;
                let rpos = self.readers[j as usize].rpos;
                if rpos - self.credit_sent[j as usize] >= (self.lay.cap / 8) as u64 {
                    self.credit_sent[j as usize] = rpos;
                    let o = self.lay.credit_out(j);
                    self.ep.mr_bytes_mut(self.mr.lkey)?[o..o + 8]
                        .copy_from_slice(&rpos.to_le_bytes());
                    self.write(j as usize, o, self.lay.credit(me), 8)?;
                    self.stats.credits += 1;
                }
            }
        }
        Ok(took)
    }

    /// Carries the core's outputs: ring messages through each peer's backlog, pushes of
    /// the own rows (once per table and peer however often asked).
    fn flush(&mut self) -> Result<(), AcuerdoError> {
        let max = ring::max_body(self.lay.cap);
        while let Some(o) = self.core.poll_output() {
            match o {
                Output::Send { to, msg } => {
                    let j = to as usize;
                    if self.down[j] || self.peers[j].is_none() {
                        continue;
                    }
                    if msg.len() > max {
                        self.stats.too_big += 1;
                        continue;
                    }
                    if self.group_takes(to, &msg) {
                        continue;
                    }
                    self.backlog[j].push_back(msg);
                    if self.backlog[j].len() > MAX_BACKLOG {
                        self.lose(j);
                    }
                }
                Output::Push { table, to } => self.pending[to as usize][t_index(table)] = true,
            }
        }
        self.send_group()?;
        for j in 0..self.lay.n {
            self.send_backlog(j)?;
            for t in [Table::Accept, Table::Commit, Table::Vote] {
                if self.pending[j][t_index(t)] {
                    self.pending[j][t_index(t)] = false;
                    self.push_row(j, t)?;
                }
            }
        }
        Ok(())
    }

    fn send_backlog(&mut self, j: usize) -> Result<(), AcuerdoError> {
        while let Some(m) = self.backlog[j].front() {
            if self.down[j] {
                return Ok(());
            }
            let Some(puts) = self.writers[j].append(m) else {
                self.stats.ring_full += 1;
                return Ok(());
            };
            self.backlog[j].pop_front();
            let me = self.cfg.core.me;
            for p in puts {
                let local = self.lay.outgoing() + p.at;
                self.ep.mr_bytes_mut(self.mr.lkey)?[local..local + p.bytes.len()]
                    .copy_from_slice(&p.bytes);
                self.write(j, local, self.lay.ring(me) + p.at, p.bytes.len())?;
            }
        }
        Ok(())
    }

    fn push_row(&mut self, j: usize, t: Table) -> Result<(), AcuerdoError> {
        if self.down[j] || self.peers[j].is_none() {
            return Ok(());
        }
        let mut row = Vec::with_capacity(ROW);
        match t {
            Table::Accept => self.core.my_accept().put(&mut row),
            Table::Commit => {
                let c = self.core.my_commit();
                c.committed.put(&mut row);
                row.extend_from_slice(&c.hb.to_le_bytes());
            }
            Table::Vote => self.core.my_vote().put(&mut row),
        }
        let at = self.lay.row(t, self.cfg.core.me);
        self.ep.mr_bytes_mut(self.mr.lkey)?[at..at + row.len()].copy_from_slice(&row);
        self.write(j, at, at, row.len())
    }

    /// One WRITE of `len` bytes from local offset `local` to offset `remote` of peer `j`'s
    /// MR; a refused post marks the peer lost.
    fn write(
        &mut self,
        j: usize,
        local: usize,
        remote: usize,
        len: usize,
    ) -> Result<(), AcuerdoError> {
        let Some((addr, rkey)) = self.peers[j] else {
            return Ok(());
        };
        if self.down[j] {
            return Ok(());
        }
        self.posted[j] = self.posted[j].wrapping_add(1);
        let wr = SendWr {
            wr_id: j as u64,
            op: SendOp::Write {
                remote_addr: addr + remote as u64,
                rkey,
            },
            sg_list: vec![Sge {
                addr: self.mr.addr + local as u64,
                length: len as u32,
                lkey: self.mr.lkey,
            }],
            signaled: self.posted[j].is_multiple_of(self.cfg.signal_every),
            solicited: false,
            ud: None,
        };
        match self.ep.post_send(self.qps[j], wr) {
            Ok(()) => {
                self.stats.writes += 1;
                Ok(())
            }
            Err(VerbsError::QueueFull(_) | VerbsError::BadState { .. }) => {
                self.lose(j);
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acuerdo::check::{check, Entry};
    use crate::acuerdo::core::Role;
    use crate::p4ce::integrity::digest;
    use rdma::verbs::EndpointConfig;

    /// `n` nodes whose frames reach each other after 1 µs (by destination MAC), in 1 µs
    /// steps; `dead` nodes neither receive nor run.
    struct Wire {
        nodes: Vec<Node>,
        flight: Vec<(u64, usize, Vec<u8>)>,
        now: u64,
        dead: Vec<bool>,
        logs: Vec<Vec<Entry>>,
    }

    fn mac(i: usize) -> [u8; 6] {
        [2, 0, 0, 0, 1, i as u8 + 1]
    }

    impl Wire {
        fn new(n: usize, ring: usize) -> Wire {
            let mut nodes = Vec::new();
            for i in 0..n {
                let mut ep = Endpoint::new(EndpointConfig::new(
                    mac(i),
                    Ipv4Addr::new(10, 0, 0, i as u8 + 1),
                ));
                for o in 0..n {
                    ep.add_neighbour(IpAddr::V4(Ipv4Addr::new(10, 0, 0, o as u8 + 1)), mac(o));
                }
                let mut cfg = NodeConfig::new(i as Pid, n);
                cfg.ring_bytes = ring;
                cfg.ack_timeout = 4;
                nodes.push(Node::new(cfg, ep).unwrap());
            }
            let infos: Vec<PeerInfo> = nodes.iter().map(|n| n.info()).collect();
            for node in &mut nodes {
                node.connect(&infos).unwrap();
            }
            Wire {
                nodes,
                flight: Vec::new(),
                now: 0,
                dead: vec![false; n],
                logs: vec![Vec::new(); n],
            }
        }

        fn step(&mut self) {
            self.now += 1_000;
            let now = self.now;
            let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.flight)
                .into_iter()
                .partition(|f| f.0 <= now);
            self.flight = later;
            for (_, to, f) in due {
                if !self.dead[to] {
                    self.nodes[to].handle_frame(now, &f);
                }
            }
            for i in 0..self.nodes.len() {
                if self.dead[i] {
                    continue;
                }
                self.nodes[i].poll(now).unwrap();
                while let Some(d) = self.nodes[i].poll_delivery() {
                    self.logs[i].push(Entry {
                        hdr: d.hdr,
                        digest: digest(&d.payload),
                    });
                }
                while let Some(f) = self.nodes[i].poll_transmit(now) {
                    if let Some(to) = (0..self.nodes.len()).find(|&o| f[..6] == mac(o)) {
                        self.flight.push((now + 1_000, to, f));
                    }
                }
            }
        }

        fn leader(&self) -> Option<usize> {
            (0..self.nodes.len()).find(|&i| !self.dead[i] && self.nodes[i].core.is_leader())
        }

        fn run(&mut self, us: u64) {
            for _ in 0..us {
                self.step();
            }
        }
    }

    #[test]
    fn messages_commit_over_rdma_writes_and_a_lost_leader_is_replaced() {
        let mut w = Wire::new(3, 512);
        let mut id = 0u64;
        while w.leader().is_none() && w.now < 20_000_000 {
            w.step();
        }
        let l = w.leader().expect("a leader");
        // More than a 512-byte ring holds: records wait for credits, slots are reused.
        for _ in 0..30 {
            for _ in 0..5 {
                let mut p = vec![7u8; 40];
                crate::p4ce::integrity::stamp(&mut p, id);
                id += 1;
                w.nodes[l].broadcast(p).unwrap();
            }
            w.run(20);
        }
        w.run(500);
        let logs = |w: &Wire, live: &[usize]| -> Vec<(u32, Vec<Entry>)> {
            live.iter()
                .map(|&i| (i as u32, w.logs[i].clone()))
                .collect()
        };
        let v = check(&logs(&w, &[0, 1, 2]), None);
        assert!(v.ok && v.delivered.iter().all(|d| d.1 == 150), "{v}");
        assert!(w.nodes[(l + 1) % 3].stats().credits > 0);
        // The leader dies; the others elect one of themselves and go on.
        w.dead[l] = true;
        w.run(5_000);
        let m = w.leader().expect("a new leader");
        assert_ne!(m, l);
        for _ in 0..10 {
            let mut p = vec![9u8; 40];
            crate::p4ce::integrity::stamp(&mut p, id);
            id += 1;
            w.nodes[m].broadcast(p).unwrap();
        }
        w.run(200);
        let live: Vec<usize> = (0..3).filter(|&i| i != l).collect();
        let v = check(&logs(&w, &live), None);
        assert!(v.ok && v.delivered.iter().all(|d| d.1 == 160), "{v}");
        assert!(live
            .iter()
            .all(|&i| w.nodes[i].core.role() != Role::Electing));
    }
}
