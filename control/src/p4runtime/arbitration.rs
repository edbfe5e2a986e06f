//! Client arbitration (P4Runtime's default role): every StreamChannel that sent an arbitration
//! update is a controller with an election id (or none); the highest election id is the
//! primary, the rest are backups. Writes and pipeline changes must carry the primary's id.
//! Two live streams may not share an election id.

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
}

/// What an arbitration update changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The primary's election id before and after.
    pub before: Option<u128>,
    pub after: Option<u128>,
}

impl Arbitration {
    /// The primary's election id.
    pub fn primary(&self) -> Option<u128> {
        self.members.iter().filter_map(|m| m.election).max()
    }

    /// Whether `election` is the primary's.
    pub fn is_primary(&self, election: Option<u128>) -> bool {
        election.is_some() && election == self.primary()
    }

    /// The stream of the primary.
    pub fn primary_stream(&self) -> Option<u64> {
        let p = self.primary()?;
        self.members
            .iter()
            .find(|m| m.election == Some(p))
            .map(|m| m.stream)
    }

    /// Every member.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Stream `stream` asks for `election` (first update or a later one).
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
        let before = self.primary();
        match self.members.iter_mut().find(|m| m.stream == stream) {
            Some(m) => m.election = election,
            None => self.members.push(Member { stream, election }),
        }
        Ok(Change {
            before,
            after: self.primary(),
        })
    }

    /// Stream `stream` closed.
    pub fn leave(&mut self, stream: u64) -> Change {
        let before = self.primary();
        self.members.retain(|m| m.stream != stream);
        Change {
            before,
            after: self.primary(),
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
    fn highest_election_id_is_primary_and_failover_picks_the_next() {
        let mut a = Arbitration::default();
        a.update(1, Some(10)).unwrap();
        let c = a.update(2, Some(20)).unwrap();
        assert_eq!((c.before, c.after), (Some(10), Some(20)));
        a.update(3, None).unwrap();
        assert!(a.is_primary(Some(20)));
        assert!(!a.is_primary(Some(10)));
        assert!(!a.is_primary(None));
        assert_eq!(a.primary_stream(), Some(2));
        assert!(a.update(3, Some(10)).is_err(), "ids are unique");
        let c = a.leave(2);
        assert_eq!(c.after, Some(10));
        assert_eq!(a.primary_stream(), Some(1));
        a.leave(1);
        assert_eq!(a.primary(), None);
        assert_eq!(a.election_of(3), Some(None));
    }
}
