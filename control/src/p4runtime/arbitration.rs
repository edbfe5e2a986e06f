//! Client arbitration (P4Runtime's default role), as the spec's "Rules for Handling
//! MasterArbitrationUpdate Messages" say: every StreamChannel that sent an arbitration update
//! is a controller with an election id (or none). A controller becomes primary when its
//! election id is at least the highest one the server has ever seen for the device; when the
//! primary leaves or lowers its id, there is no primary until another controller arbitrates
//! successfully (no backup is promoted on its own). Writes and pipeline changes must carry the
//! primary's id. Two live streams may not share an election id.

use super::codec::P4Error;

/// One controller's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub stream: u64,
    pub election: Option<u128>,
}

/// The controllers of one device.
#[derive(Debug, Default)]
pub struct Arbitration {
    members: Vec<Member>,
    /// The highest election id ever seen (`election_id_past`).
    highest: Option<u128>,
    /// The primary's stream, while there is one.
    primary: Option<u64>,
}

/// What an arbitration update changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The primary (stream and election id) before and after.
    pub before: Option<(u64, u128)>,
    pub after: Option<(u64, u128)>,
}

impl Change {
    /// Whether the primary, or its election id, changed: every controller is told.
    pub fn changed(&self) -> bool {
        self.before != self.after
    }
}

impl Arbitration {
    /// The primary's stream and election id.
    fn current(&self) -> Option<(u64, u128)> {
        let s = self.primary?;
        let m = self.members.iter().find(|m| m.stream == s)?;
        Some((s, m.election?))
    }

    /// The primary's election id.
    pub fn primary(&self) -> Option<u128> {
        self.current().map(|c| c.1)
    }

    /// The highest election id the server has seen (reported in arbitration updates).
    pub fn highest(&self) -> Option<u128> {
        self.highest
    }

    /// Whether `election` is the primary's.
    pub fn is_primary(&self, election: Option<u128>) -> bool {
        election.is_some() && election == self.primary()
    }

    /// The stream of the primary.
    pub fn primary_stream(&self) -> Option<u64> {
        self.current().map(|c| c.0)
    }

    /// Every member.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Stream `stream` asks for `election` (first update or a later one): it becomes primary
    /// when `election` is at least the highest id ever seen; a primary that lowers (or unsets)
    /// its id leaves the device without a primary.
    pub fn update(&mut self, stream: u64, election: Option<u128>) -> Result<Change, P4Error> {
        if let Some(e) = election {
            if self
                .members
                .iter()
                .any(|m| m.stream != stream && m.election == Some(e))
            {
                return Err(P4Error::invalid(format!(
                    "election id {e} is already used by another controller"
                )));
            }
        }
        let before = self.current();
        match self.members.iter_mut().find(|m| m.stream == stream) {
            Some(m) => m.election = election,
            None => self.members.push(Member { stream, election }),
        }
        match election {
            Some(e) if self.highest.is_none_or(|h| e >= h) => {
                self.highest = Some(e);
                self.primary = Some(stream);
            }
            _ if self.primary == Some(stream) => self.primary = None,
            _ => {}
        }
        Ok(Change {
            before,
            after: self.current(),
        })
    }

    /// Stream `stream` closed; when it was the primary, there is none until the next
    /// successful arbitration.
    pub fn leave(&mut self, stream: u64) -> Change {
        let before = self.current();
        self.members.retain(|m| m.stream != stream);
        if self.primary == Some(stream) {
            self.primary = None;
        }
        Change {
            before,
            after: self.current(),
        }
    }

    /// The election id of stream `stream`, if it has arbitrated.
    pub fn election_of(&self, stream: u64) -> Option<Option<u128>> {
        self.members
            .iter()
            .find(|m| m.stream == stream)
            .map(|m| m.election)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_election_id_ever_seen_is_primary_and_nobody_is_promoted() {
        let mut a = Arbitration::default();
        a.update(1, Some(10)).unwrap();
        let c = a.update(2, Some(20)).unwrap();
        assert_eq!((c.before, c.after), (Some((1, 10)), Some((2, 20))));
        a.update(3, None).unwrap();
        assert!(a.is_primary(Some(20)));
        assert!(!a.is_primary(Some(10)));
        assert!(!a.is_primary(None));
        assert_eq!(a.primary_stream(), Some(2));
        assert!(a.update(3, Some(10)).is_err(), "ids are unique");
        let c = a.leave(2);
        assert!(c.changed());
        assert_eq!(c.after, None, "the backup is not promoted");
        assert_eq!(a.highest(), Some(20));
        assert_eq!(a.update(1, Some(15)).unwrap().after, None, "15 < 20 seen");
        assert_eq!(a.update(1, Some(20)).unwrap().after, Some((1, 20)));
        let c = a.update(1, Some(3)).unwrap();
        assert_eq!(c.after, None, "a primary that lowers its id steps down");
        a.leave(1);
        assert_eq!(a.primary(), None);
        assert_eq!(a.election_of(3), Some(None));
    }
}
