//! One P4CE node as every lab builds it: the endpoint settings, the log MR, the CQ and QPs
//! ([`build_node`]), the addressing ([`host_mac`], [`host_ip`]), and the RDMA CM steps every
//! node takes (the node itself is [`super::machine::Node`]): a replica answering a ConnectRequest with its log
//! ([`replica_accept`]), the leader asking the switch agent for the group
//! ([`leader_request_group`]) and reading its answer ([`switch_path_from_reply`]).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use rdma::verbs::{
    AccessFlags, ConnId, CqHandle, Endpoint, EndpointConfig, Instant, MrInfo, PdHandle, QpAttr,
    QpInitAttr, QpState, QpType, VerbsError,
};

use super::wire::{GroupReply, GroupRequest, ReplicaAddr, ReplicaOffer, P4CE_SERVICE_PORT};
use super::{NodeError, GROUP, REPLICA_CM_PORT, SWITCH_IP, SWITCH_MAC};
use crate::mu::{LogGeometry, SwitchPath};

/// The MAC address of node `id` (1 = the first leader).
pub fn host_mac(id: u16) -> [u8; 6] {
    [2, 0, 0, 0, 0, id as u8]
}

/// The IPv4 address of node `id`.
pub fn host_ip(id: u16) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, id as u8)
}

/// What a node is built from.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// Its id.
    pub id: u16,
    /// Every node's id (its neighbours are the others and the switch).
    pub ids: Vec<u16>,
    /// Leader (checks ICRC, one unicast QP per replica) or replica.
    pub leader: bool,
    /// The log's shape.
    pub geometry: LogGeometry,
    /// Replicas in the group.
    pub replicas: usize,
    /// Seed of the endpoint (PSNs).
    pub seed: u64,
    /// Listen on [`REPLICA_CM_PORT`] (replicas set up through RDMA CM).
    pub listen: bool,
    /// Extra QPs towards other replicas (leader fail-over).
    pub mesh: usize,
    /// ACK timeout code of its QPs (4.096 µs × 2^code).
    pub ack_timeout: u8,
    /// How long its RDMA CM waits for an answer before resending.
    pub cm_response_timeout: Duration,
    /// The MAC every neighbour (the switch's IP and the other nodes) is reached through: the
    /// router MAC of its first-hop switch when the group is spread over a routed fabric (a
    /// leaf-spine); None: one L2 segment, each peer at its own MAC and the switch at
    /// [`SWITCH_MAC`].
    pub gateway: Option<[u8; 6]>,
}

/// A built node: its endpoint and the handles the log uses.
pub struct NodeParts {
    /// The endpoint.
    pub ep: Endpoint,
    /// Protection domain of its log and QPs.
    pub pd: PdHandle,
    /// Its log MR (log plus status words).
    pub log: MrInfo,
    /// Its CQ.
    pub cq: CqHandle,
    /// Leader: its QP to the BCast QP. Replica: its QP towards the switch's Aggr QP.
    pub switch_qp: u32,
    /// Leader: one QP per replica. Replica: one QP, towards the leader.
    pub uni_qps: Vec<u32>,
    /// QPs towards other replicas.
    pub mesh: Vec<u32>,
}

/// The endpoint of P4CE node `id` among `ids`: its address, every neighbour (the other
/// nodes and the switch's IP) reached at its own MAC or through `gateway`, ICRC checking
/// (`check_icrc`: off where the switch's scattered WRITEs land), at most 256 packets in
/// flight per QP (p4ce.p4 counts ACKs in 256 PSN cells per group), and the RDMA CM timers.
pub fn p4ce_endpoint(
    id: u16,
    ids: &[u16],
    check_icrc: bool,
    seed: u64,
    ack_timeout: u8,
    cm_response_timeout: Duration,
    gateway: Option<[u8; 6]>,
) -> Endpoint {
    let mut ecfg = EndpointConfig::new(host_mac(id), host_ip(id));
    ecfg.seed ^= seed;
    ecfg.icrc_check = check_icrc;
    ecfg.transport.max_inflight_pkts = 256;
    ecfg.cm.timeout = ack_timeout;
    ecfg.cm.min_rnr_timer = 1;
    ecfg.cm.response_timeout = cm_response_timeout;
    let mut ep = Endpoint::new(ecfg);
    ep.add_neighbour(IpAddr::V4(SWITCH_IP), gateway.unwrap_or(SWITCH_MAC));
    for o in ids {
        if *o != id {
            ep.add_neighbour(IpAddr::V4(host_ip(*o)), gateway.unwrap_or(host_mac(*o)));
        }
    }
    ep
}

/// Builds a node's endpoint, log, CQ and QPs.
pub fn build_node(spec: &NodeSpec) -> Result<NodeParts, VerbsError> {
    // Scattered WRITEs keep the leader's stale ICRC (p4ce.p4's header): replicas run with
    // ICRC checking off, as on ConnectX NICs behind a rewriting switch.
    let mut ep = p4ce_endpoint(
        spec.id,
        &spec.ids,
        spec.leader,
        spec.seed,
        spec.ack_timeout,
        spec.cm_response_timeout,
        spec.gateway,
    );
    let pd = ep.alloc_pd();
    let log = ep.reg_mr(
        pd,
        crate::mu::slot::status_area(spec.geometry, spec.replicas.max(1))
            .max(crate::mu::join::replica_area(spec.geometry)),
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
    )?;
    if spec.listen {
        ep.listen(REPLICA_CM_PORT)?;
    }
    let cq = ep.create_cq(1 << 16);
    let qp = |ep: &mut Endpoint| {
        ep.create_qp(QpInitAttr {
            pd,
            qp_type: QpType::Rc,
            send_cq: cq,
            recv_cq: cq,
            max_send_wr: 4096,
            max_recv_wr: 1,
        })
    };
    let switch_qp = qp(&mut ep)?;
    let uni_n = if spec.leader { spec.replicas } else { 1 };
    let mut uni_qps = Vec::new();
    for _ in 0..uni_n {
        uni_qps.push(qp(&mut ep)?);
    }
    let mut mesh = Vec::new();
    for _ in 0..spec.mesh {
        mesh.push(qp(&mut ep)?);
    }
    Ok(NodeParts {
        ep,
        pd,
        log,
        cq,
        switch_qp,
        uni_qps,
        mesh,
    })
}

/// Moves `qpn` back to Reset if it is anywhere else (before it is handed to a new
/// connection).
pub fn reset_qp(ep: &mut Endpoint, qpn: u32) -> Result<(), VerbsError> {
    if ep.qp_state(qpn)? != QpState::Reset {
        ep.modify_qp(
            qpn,
            &QpAttr {
                state: Some(QpState::Reset),
                ..Default::default()
            },
        )?;
    }
    Ok(())
}

/// A replica accepts a ConnectRequest on `qpn`, offering its log (VA, size, R_key) in the
/// reply: to the switch agent (on its switch QP) or to a leader (on its unicast QP).
pub fn replica_accept(
    ep: &mut Endpoint,
    now: Instant,
    conn: ConnId,
    qpn: u32,
    log: MrInfo,
    geometry: LogGeometry,
) -> Result<(), VerbsError> {
    let offer = replica_offer(log, geometry);
    accept_on(ep, now, conn, qpn, &offer.to_bytes())
}

/// What a replica offers of its log (VA, size, R_key).
pub fn replica_offer(log: MrInfo, geometry: LogGeometry) -> ReplicaOffer {
    ReplicaOffer {
        rkey: log.rkey,
        va: log.addr,
        size: geometry.len() as u64,
    }
}

/// Accepts a ConnectRequest on `qpn` (reset first) with `private_data` in the reply.
pub fn accept_on(
    ep: &mut Endpoint,
    now: Instant,
    conn: ConnId,
    qpn: u32,
    private_data: &[u8],
) -> Result<(), VerbsError> {
    reset_qp(ep, qpn)?;
    ep.accept(now, conn, qpn, private_data)
}

/// The leader asks the switch agent for the group over RDMA CM from `switch_qp` (`old`, its
/// earlier connection, is disconnected first, which tears the old group down). `replicas`:
/// `(IP, id)` of each live replica. The switch path comes with the `Established` event
/// ([`switch_path_from_reply`]).
pub fn leader_request_group(
    ep: &mut Endpoint,
    now: Instant,
    switch_qp: u32,
    old: Option<ConnId>,
    f: usize,
    leader_id: u16,
    replicas: &[(Ipv4Addr, u16)],
) -> Result<ConnId, NodeError> {
    if let Some(c) = old {
        let _ = ep.disconnect(now, c);
    }
    reset_qp(ep, switch_qp)?;
    let req = GroupRequest {
        group: GROUP,
        f: f as u8,
        leader_ep: leader_id,
        replicas: replicas
            .iter()
            .map(|(ip, ep)| ReplicaAddr {
                ip: *ip,
                port: REPLICA_CM_PORT,
                ep: *ep,
            })
            .collect(),
    };
    let pd = req
        .to_bytes()
        .map_err(|e| NodeError::Config(e.to_string()))?;
    Ok(ep.connect(
        now,
        switch_qp,
        IpAddr::V4(SWITCH_IP),
        P4CE_SERVICE_PORT,
        &pd,
    )?)
}

/// The switch path the agent's ConnectReply gives the leader's `switch_qp`.
pub fn switch_path_from_reply(switch_qp: u32, private_data: &[u8]) -> Result<SwitchPath, String> {
    GroupReply::parse(private_data)
        .map(|g| SwitchPath {
            qpn: switch_qp,
            vrkey: g.vrkey,
            psn_window: super::PSN_WINDOW,
        })
        .map_err(|e| e.to_string())
}
