//! Counters of an endpoint: every dropped or unusual frame is counted by reason.

/// Endpoint counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames given to `handle_frame`.
    pub rx_frames: u64,
    /// Frames that did not parse as RoCEv2 (or ARP).
    pub rx_malformed: u64,
    /// Frames for another MAC or IP address.
    pub rx_not_for_us: u64,
    /// Frames dropped for a bad ICRC (with checking on).
    pub rx_icrc_errors: u64,
    /// Frames for a QP that does not exist.
    pub rx_unknown_qp: u64,
    /// Frames dropped because of the QP state, type or peer.
    pub rx_dropped_state: u64,
    /// UD packets with the wrong Q_Key.
    pub rx_bad_qkey: u64,
    /// UD packets dropped for lack of a receive WQE.
    pub rx_no_rwqe: u64,
    /// Responses for PSNs never sent.
    pub rx_ghost_responses: u64,
    /// Duplicate requests or responses.
    pub duplicates: u64,
    /// Frames returned by `poll_transmit`.
    pub tx_frames: u64,
    /// Go-back-N rewinds.
    pub retransmissions: u64,
    /// Local ACK timeouts.
    pub timeouts: u64,
    /// Go-backs repeated because one left `una` where it was for two round trips (a NAK,
    /// a retransmission's head or a re-issued READ request lost too).
    pub recoveries: u64,
    /// NAK PSN sequence errors sent.
    pub seq_naks_sent: u64,
    /// NAK PSN sequence errors received.
    pub seq_naks_received: u64,
    /// RNR NAKs sent.
    pub rnr_naks_sent: u64,
    /// RNR NAKs received.
    pub rnr_naks_received: u64,
    /// Fatal NAKs (invalid request, remote access, remote operational) sent.
    pub fatal_naks_sent: u64,
    /// CNPs sent.
    pub cnps_sent: u64,
    /// CNPs received.
    pub cnps_received: u64,
    /// CM MADs received.
    pub cm_mads_received: u64,
    /// CM MADs that did not parse or matched no connection.
    pub cm_mads_dropped: u64,
    /// Frames that could not be built (should stay 0).
    pub tx_build_errors: u64,
}
