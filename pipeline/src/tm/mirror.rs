//! Mirror sessions (`$mirror.cfg`): session id → where mirror copies go.
//!
//! Session ids: Tofino 1 uses 1..=1023 (0 is reserved), Tofino 2 uses 0..=255; the valid
//! range is a constructor argument ([`MirrorSessions::new`], or [`MirrorSessions::for_target`]).
//! A session's destination is a full TM destination: one unicast port, or multicast through
//! the PRE with its own groups, exclusion ids and RID (so a mirror can itself multicast).
//! `max_len` truncates each mirror copy, mirror header included; `enabled = false` keeps the configuration but
//! mirrors nothing.

use std::ops::RangeInclusive;

use crate::ir::{Gress, Target};

use super::pre::{ReplicationRequest, MAX_DEV_PORT};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorDirection {
    Ingress,
    Egress,
    Both,
}

impl MirrorDirection {
    pub fn covers(self, gress: Gress) -> bool {
        matches!(
            (self, gress),
            (MirrorDirection::Both, _)
                | (MirrorDirection::Ingress, Gress::Ingress)
                | (MirrorDirection::Egress, Gress::Egress)
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorDest {
    /// One copy to this dev port.
    Port(u16),
    /// Copies through the PRE.
    Multicast {
        mcast_grp_a: Option<u16>,
        mcast_grp_b: Option<u16>,
        level1_exclusion_id: u16,
        level2_exclusion_id: u16,
        rid: u16,
        /// The PRE hashes of the session's copies (bf-rt `$mirror.cfg`'s hash fields; default
        /// 0): a mirror copy is replicated with the session's hashes, not the packet's
        /// `level1/2_mcast_hash` (tofino-model `Mirror::MirrorPktSetI2Qmetadata`).
        level1_mcast_hash: u16,
        level2_mcast_hash: u16,
    },
}

impl MirrorDest {
    /// The PRE request for a multicast destination (hashes from the session).
    pub fn replication(&self) -> Option<ReplicationRequest> {
        match *self {
            MirrorDest::Port(_) => None,
            MirrorDest::Multicast {
                mcast_grp_a,
                mcast_grp_b,
                level1_exclusion_id,
                level2_exclusion_id,
                rid,
                level1_mcast_hash,
                level2_mcast_hash,
            } => Some(ReplicationRequest {
                mcast_grp_a,
                mcast_grp_b,
                level1_exclusion_id,
                level2_exclusion_id,
                rid,
                level1_mcast_hash,
                level2_mcast_hash,
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MirrorSession {
    pub direction: MirrorDirection,
    pub dest: MirrorDest,
    /// Truncate mirror copies to this many bytes (`None`: whole packet).
    pub max_len: Option<u16>,
    pub enabled: bool,
}

impl MirrorSession {
    /// The bytes of a mirror copy kept: (of its `hdr`-byte mirror header, of the `pkt`-byte
    /// packet). `max_len` counts the copy as the deparser built it, mirror header first
    /// (tofino-model `Mirror::ProcessMirrorPacket` trims the whole mirror packet to the
    /// session's size), so the header leaves that much less room for the packet.
    pub fn copy_len(&self, hdr: usize, pkt: usize) -> (usize, usize) {
        match self.max_len {
            Some(m) => {
                let m = usize::from(m);
                (hdr.min(m), pkt.min(m.saturating_sub(hdr)))
            }
            None => (hdr, pkt),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    #[error("mirror session {id} is outside {first}..={last}")]
    SessionOutOfRange { id: u16, first: u16, last: u16 },
    #[error("mirror session {0} is not configured")]
    NotFound(u16),
    #[error("mirror destination port {0} is above {MAX_DEV_PORT}")]
    BadPort(u16),
    #[error("multicast mirror destination names no group")]
    NoGroup,
    #[error("mirror truncation length 0 would send empty copies")]
    ZeroMaxLen,
}

/// The mirror session table.
#[derive(Debug, Clone)]
pub struct MirrorSessions {
    first: u16,
    last: u16,
    sessions: Vec<Option<MirrorSession>>,
}

impl MirrorSessions {
    /// Sessions with ids in `ids` (an empty range gives a table that refuses everything).
    pub fn new(ids: RangeInclusive<u16>) -> MirrorSessions {
        let (first, last) = (*ids.start(), *ids.end());
        let n = if last >= first {
            usize::from(last - first) + 1
        } else {
            0
        };
        MirrorSessions {
            first,
            last,
            sessions: vec![None; n],
        }
    }

    /// Tofino 1: 1..=1023; Tofino 2: 0..=255.
    pub fn for_target(target: Target) -> MirrorSessions {
        match target {
            Target::Tofino1 => MirrorSessions::new(1..=1023),
            Target::Tofino2 => MirrorSessions::new(0..=255),
        }
    }

    pub fn id_range(&self) -> RangeInclusive<u16> {
        self.first..=self.last
    }

    fn slot(&self, id: u16) -> Result<usize, MirrorError> {
        if id < self.first || id > self.last || self.sessions.is_empty() {
            return Err(MirrorError::SessionOutOfRange {
                id,
                first: self.first,
                last: self.last,
            });
        }
        Ok(usize::from(id - self.first))
    }

    /// Adds or replaces a session.
    pub fn configure(&mut self, id: u16, session: MirrorSession) -> Result<(), MirrorError> {
        let i = self.slot(id)?;
        match session.dest {
            MirrorDest::Port(p) if p > MAX_DEV_PORT => return Err(MirrorError::BadPort(p)),
            MirrorDest::Multicast {
                mcast_grp_a: None,
                mcast_grp_b: None,
                ..
            } => return Err(MirrorError::NoGroup),
            _ => {}
        }
        if session.max_len == Some(0) {
            return Err(MirrorError::ZeroMaxLen);
        }
        self.sessions[i] = Some(session);
        Ok(())
    }

    /// Removes a session, returning what it was.
    pub fn delete(&mut self, id: u16) -> Result<MirrorSession, MirrorError> {
        let i = self.slot(id)?;
        self.sessions[i].take().ok_or(MirrorError::NotFound(id))
    }

    /// Enables or disables a configured session.
    pub fn set_enabled(&mut self, id: u16, enabled: bool) -> Result<(), MirrorError> {
        let i = self.slot(id)?;
        let s = self.sessions[i].as_mut().ok_or(MirrorError::NotFound(id))?;
        s.enabled = enabled;
        Ok(())
    }

    /// The configuration of a session (enabled or not).
    pub fn get(&self, id: u16) -> Option<&MirrorSession> {
        let i = self.slot(id).ok()?;
        self.sessions[i].as_ref()
    }

    /// Packet path: the session a deparser in `gress` may mirror to, if it is configured,
    /// enabled and covers that direction. `None` means the mirror copy is dropped.
    pub fn active(&self, id: u16, gress: Gress) -> Option<&MirrorSession> {
        self.get(id)
            .filter(|s| s.enabled && s.direction.covers(gress))
    }

    /// Configured sessions in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &MirrorSession)> + '_ {
        self.sessions
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (self.first + i as u16, s)))
    }
}
