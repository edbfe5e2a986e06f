//! The 1Pipe switch agent for `p4/programs/onepipe.p4`: numbers a switch's input links for
//! the barrier trees, writes each link's per-level tree modes into table `links`, and, polling
//! the per-link barrier registers, removes a link silent past a timeout and admits a joining
//! link once its barrier passes the switch's output barrier (SIGCOMM 2021, §4.2).
//!
//! A link is silent when its packet count (`link_packets`) has not moved for the timeout:
//! beacons keep a live link's count moving even while its barrier stands still (as it does
//! while the fabric starts). The decision ([`LinkAgent::decide`]) is separate from the switch I/O
//! ([`LinkAgent::poll`]) so that it can be driven by any clock.
//!
//! Best effort removes a silent link on the switch's own decision (§4.2: decentralized).
//! Reliable 1Pipe's recovery (§5.2) has the controller first tell every correct process
//! (Broadcast, Discard, Recall, Callback) and only then remove the failed component's input
//! link (Resume): an agent made with [`LinkAgent::hold_removals`] marks a silent link
//! [`LinkState::Silent`] (its last barrier still holds the minimum back) and reports it; the
//! controller removes it with [`LinkAgent::remove`] once the processes completed.

use std::collections::BTreeMap;

use pipeline::api::PipeSel;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;
use thiserror::Error;

/// Levels of each barrier tree (32 links).
pub const LEVELS: usize = 5;
/// Input links a switch can have.
pub const MAX_LINKS: usize = 1 << LEVELS;

const LINKS: &str = "SwitchIngress.links";
const UPLINKS: &str = "SwitchIngress.uplinks";
const LINK_BE: &str = "SwitchIngress.link_be";
const LINK_PACKETS: &str = "SwitchIngress.link_packets";
const LINK_COMMIT: &str = "SwitchIngress.link_commit";
const OUT_BE: &str = "SwitchIngress.out_be";
/// The register arrays of the two trees, level by level.
const TREES: [[&str; LEVELS]; 2] = [
    [
        "SwitchIngress.be0",
        "SwitchIngress.be1",
        "SwitchIngress.be2",
        "SwitchIngress.be3",
        "SwitchIngress.be4",
    ],
    [
        "SwitchIngress.cm0",
        "SwitchIngress.cm1",
        "SwitchIngress.cm2",
        "SwitchIngress.cm3",
        "SwitchIngress.cm4",
    ],
];

/// What a packet of a link does at one level of a tree (onepipe.p4's MODE_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    WriteLeft = 0,
    WriteRight = 1,
    WriteBoth = 2,
    Read = 3,
}

/// Which half of the trees a link is in: the routing graph must be a DAG (seed Figure 3), so
/// each switch is an up switch (links from below, output to uplinks) and a down switch (links
/// from above and the up switch, output to downlinks). Links from below are numbered
/// 0..15 (the left subtree: its minimum, after level 3, is the up switch's barrier), links from
/// above 16..31 (the root is the down switch's barrier). A core switch has only links below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Below,
    Above,
}

/// Where a link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Its barrier is part of the minimum.
    Live,
    /// New: its packets read the output until its barrier passes it.
    Joining,
    /// Silent past the timeout, held for the controller ([`LinkAgent::hold_removals`]): still
    /// part of the minimum until [`LinkAgent::remove`].
    Silent,
    /// Silent past the timeout: removed from the minimum, its packets dropped.
    Dead,
}

/// What [`LinkAgent::decide`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkEvent {
    Removed {
        link: u8,
        port: u16,
    },
    /// Silent past the timeout, kept until the controller removes it.
    Silent {
        link: u8,
        port: u16,
    },
    Joined {
        link: u8,
        port: u16,
    },
}

/// Errors of the agent.
#[derive(Debug, Error)]
pub enum OnepipeError {
    #[error("a 1Pipe switch has at most {} input links from each side", MAX_LINKS / 2)]
    TooManyLinks,
    #[error("port {0} is already an input link")]
    DuplicatePort(u16),
    #[error(transparent)]
    Api(#[from] pipeline::api::ApiError),
}

/// `a < b` for 32-bit barriers in serial arithmetic.
pub fn serial_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Puts a joined link's last barriers into its leaves (its packets only read while joining,
/// so its halves still hold whatever was there); the ancestors follow with the next packet.
fn seed(sw: &mut Switch, link: u8) -> Result<(), OnepipeError> {
    for (tree, reg) in TREES.iter().zip([LINK_BE, LINK_COMMIT]) {
        let b = sw.register_read(PipeSel::All, reg, u32::from(link))?[0].lo;
        let cell = u32::from(link >> 1);
        let c = sw.register_read(PipeSel::All, tree[0], cell)?;
        let (left, right) = if link & 1 == 1 {
            (c[0].lo, b)
        } else {
            (b, c[0].hi)
        };
        sw.register_write(PipeSel::All, tree[0], cell, left, Some(right))?;
    }
    Ok(())
}

/// The lesser of two barriers in serial arithmetic.
pub fn serial_min(a: u32, b: u32) -> u32 {
    if serial_lt(b, a) {
        b
    } else {
        a
    }
}

/// The modes of `link` given which links are live: its own half at each level, or both halves
/// where the sibling subtree holds no live link; all reads while it is joining.
pub fn modes(link: u8, live: &[u8], joining: bool) -> [Mode; LEVELS] {
    let mut out = [Mode::Read; LEVELS];
    if joining {
        return out;
    }
    for (k, m) in out.iter_mut().enumerate() {
        let sibling = (link >> k) ^ 1;
        *m = if !live.iter().any(|&l| l >> k == sibling) {
            Mode::WriteBoth
        } else if (link >> k) & 1 == 1 {
            Mode::WriteRight
        } else {
            Mode::WriteLeft
        };
    }
    out
}

#[derive(Debug, Clone)]
struct Link {
    port: u16,
    side: Side,
    state: LinkState,
    /// The packet count last seen and since when.
    last: Option<(u64, u64)>,
    /// The barrier it last brought.
    barrier: u32,
}

/// One switch's input links.
#[derive(Debug, Clone)]
pub struct LinkAgent {
    links: BTreeMap<u8, Link>,
    timeout_ns: u64,
    hold: bool,
}

impl LinkAgent {
    /// An agent removing links silent for `timeout_ns` (the paper: 10 beacon intervals).
    pub fn new(timeout_ns: u64) -> Self {
        LinkAgent {
            links: BTreeMap::new(),
            timeout_ns,
            hold: false,
        }
    }

    /// Silent links wait for the controller's [`LinkAgent::remove`] (reliable 1Pipe, §5.2)
    /// instead of leaving the minimum at the timeout.
    pub fn hold_removals(mut self) -> Self {
        self.hold = true;
        self
    }

    /// Adds the link on `port` from `side` (joining unless the fabric is starting): its number.
    pub fn add_link(&mut self, port: u16, side: Side, joining: bool) -> Result<u8, OnepipeError> {
        if self
            .links
            .values()
            .any(|l| l.port == port && l.state != LinkState::Dead)
        {
            return Err(OnepipeError::DuplicatePort(port));
        }
        let half = (MAX_LINKS / 2) as u8;
        let base = if side == Side::Above { half } else { 0 };
        let n = (base..base + half)
            .find(|n| self.links.get(n).is_none_or(|l| l.state == LinkState::Dead))
            .ok_or(OnepipeError::TooManyLinks)?;
        let state = if joining {
            LinkState::Joining
        } else {
            LinkState::Live
        };
        self.links.insert(
            n,
            Link {
                port,
                side,
                state,
                last: None,
                barrier: 0,
            },
        );
        Ok(n)
    }

    /// The state of link `n`.
    pub fn state(&self, n: u8) -> Option<LinkState> {
        self.links.get(&n).map(|l| l.state)
    }

    fn live(&self) -> Vec<u8> {
        let live = self
            .links
            .iter()
            .filter(|(_, l)| matches!(l.state, LinkState::Live | LinkState::Silent));
        live.map(|(&n, _)| n).collect()
    }

    /// The `links` entries: (port, link, modes) of every link that is not dead.
    pub fn entries(&self) -> Vec<(u16, u8, [Mode; LEVELS])> {
        let live = self.live();
        self.links
            .iter()
            .filter(|(_, l)| l.state != LinkState::Dead)
            .map(|(&n, l)| (l.port, n, modes(n, &live, l.state == LinkState::Joining)))
            .collect()
    }

    /// Decides from what was read at `now`: per link (number, packet count, last barrier),
    /// and the switch's output barrier.
    pub fn decide(&mut self, now: u64, links: &[(u8, u64, u32)], out_be: u32) -> Vec<LinkEvent> {
        let mut events = Vec::new();
        for &(n, count, b) in links {
            let Some(l) = self.links.get_mut(&n) else {
                continue;
            };
            l.barrier = b;
            match l.last {
                Some((prev, _)) if prev == count => {}
                _ => l.last = Some((count, now)),
            }
            let since = l.last.map_or(now, |(_, t)| t);
            match l.state {
                LinkState::Live | LinkState::Joining if now - since >= self.timeout_ns => {
                    // A held joining link never counted in the minimum: nothing to wait for.
                    if self.hold && l.state == LinkState::Live {
                        l.state = LinkState::Silent;
                        events.push(LinkEvent::Silent {
                            link: n,
                            port: l.port,
                        });
                    } else {
                        l.state = LinkState::Dead;
                        events.push(LinkEvent::Removed {
                            link: n,
                            port: l.port,
                        });
                    }
                }
                LinkState::Joining if serial_lt(out_be, l.barrier) => {
                    l.state = LinkState::Live;
                    events.push(LinkEvent::Joined {
                        link: n,
                        port: l.port,
                    });
                }
                _ => {}
            }
        }
        events
    }

    /// Writes table `links` from scratch (after [`LinkAgent::add_link`] or a change).
    pub fn install(&self, sw: &mut Switch, removed: &[u16]) -> Result<(), OnepipeError> {
        for &port in removed {
            let key = [(
                "ig_intr_md.ingress_port",
                KeyMatch::Exact(Value::from(port)),
            )];
            // Absent already is fine: a removed link may never have been installed.
            let _ = sw.table_delete(PipeSel::All, LINKS, &key, None);
        }
        for (port, n, m) in self.entries() {
            let key = [(
                "ig_intr_md.ingress_port",
                KeyMatch::Exact(Value::from(port)),
            )];
            let _ = sw.table_delete(PipeSel::All, LINKS, &key, None);
            let params: Vec<(&str, Value)> = std::iter::once(("link", Value::from(n)))
                .chain(
                    ["m0", "m1", "m2", "m3", "m4"]
                        .into_iter()
                        .zip(m.iter().map(|&x| Value::from(x as u8))),
                )
                .collect();
            sw.table_add(PipeSel::All, LINKS, &key, None, "set_link", &params)?;
        }
        for l in self.links.values().filter(|l| l.side == Side::Above) {
            let key = [(
                "ig_tm_md.ucast_egress_port",
                KeyMatch::Exact(Value::from(l.port)),
            )];
            let _ = sw.table_delete(PipeSel::All, UPLINKS, &key, None);
            sw.table_add(PipeSel::All, UPLINKS, &key, None, "is_uplink", &[])?;
        }
        Ok(())
    }

    /// Reads the link registers of `sw` at `now`, decides, and rewrites `links` on a change.
    pub fn poll(&mut self, sw: &mut Switch, now: u64) -> Result<Vec<LinkEvent>, OnepipeError> {
        let mut readings = Vec::new();
        for (&n, l) in &self.links {
            if l.state != LinkState::Dead {
                let v = sw.register_read(PipeSel::All, LINK_BE, u32::from(n))?;
                let c = sw.counter_read(PipeSel::All, LINK_PACKETS, u32::from(n))?;
                let packets = c.iter().map(|c| c.packets).sum();
                readings.push((n, packets, v.first().map_or(0, |c| c.lo as u32)));
            }
        }
        let out = sw.register_read(PipeSel::All, OUT_BE, 0)?;
        let out = out.first().map_or(0, |c| c.lo as u32);
        let events = self.decide(now, &readings, out);
        if !events.is_empty() {
            let removed: Vec<u16> = events
                .iter()
                .filter_map(|e| match e {
                    LinkEvent::Removed { port, .. } => Some(*port),
                    LinkEvent::Joined { .. } | LinkEvent::Silent { .. } => None,
                })
                .collect();
            self.install(sw, &removed)?;
            for e in &events {
                match *e {
                    LinkEvent::Removed { link, .. } => self.repair(sw, link)?,
                    LinkEvent::Joined { link, .. } => seed(sw, link)?,
                    LinkEvent::Silent { .. } => {}
                }
            }
        }
        Ok(events)
    }

    /// The controller's Resume (§5.2): removes link `link` from the minimum of `sw` (a held
    /// silent link, or any live one); `None` when it is not in the minimum.
    pub fn remove(&mut self, sw: &mut Switch, link: u8) -> Result<Option<LinkEvent>, OnepipeError> {
        let Some(l) = self.links.get_mut(&link) else {
            return Ok(None);
        };
        if l.state == LinkState::Dead {
            return Ok(None);
        }
        l.state = LinkState::Dead;
        let port = l.port;
        self.install(sw, &[port])?;
        self.repair(sw, link)?;
        Ok(Some(LinkEvent::Removed { link, port }))
    }

    /// Takes a removed link's stale barrier out of the trees: bottom-up along its path, the
    /// half of each cell that stands for a subtree without live links gets the other half's
    /// value, and a half over a subtree with live links the minimum of its child cell. Until
    /// then the stale value would hold the output back until every live sibling had sent.
    fn repair(&self, sw: &mut Switch, dead: u8) -> Result<(), OnepipeError> {
        let live = self.live();
        let has_live = |k: usize, sub: u8| live.iter().any(|&l| l >> k == sub);
        for tree in TREES {
            for (k, reg) in tree.iter().enumerate() {
                let sub = dead >> k;
                let cell = u32::from(sub >> 1);
                let c = sw.register_read(PipeSel::All, reg, cell)?;
                let (mut left, mut right) = (c[0].lo as u32, c[0].hi as u32);
                let mine = if has_live(k, sub) && k > 0 {
                    let below = sw.register_read(PipeSel::All, tree[k - 1], u32::from(sub))?;
                    Some(serial_min(below[0].lo as u32, below[0].hi as u32))
                } else {
                    None
                };
                let (side, other) = if sub & 1 == 1 {
                    (&mut right, left)
                } else {
                    (&mut left, right)
                };
                *side = match mine {
                    Some(v) => v,
                    None if has_live(k, sub ^ 1) => other,
                    None => *side,
                };
                sw.register_write(
                    PipeSel::All,
                    reg,
                    cell,
                    Value::from(left),
                    Some(Value::from(right)),
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_write_both_halves_over_dead_subtrees() {
        use Mode::*;
        let live = [0, 1, 2, 3];
        assert_eq!(
            modes(0, &live, false),
            [WriteLeft, WriteLeft, WriteBoth, WriteBoth, WriteBoth]
        );
        assert_eq!(
            modes(3, &live, false),
            [WriteRight, WriteRight, WriteBoth, WriteBoth, WriteBoth]
        );
        assert_eq!(modes(2, &[0, 1, 2], false)[0], WriteBoth);
        assert_eq!(
            modes(17, &[1, 17], false),
            [WriteBoth, WriteBoth, WriteBoth, WriteBoth, WriteRight]
        );
        assert_eq!(modes(5, &live, true), [Read; LEVELS]);
    }

    #[test]
    fn a_silent_link_is_removed_and_a_joining_one_admitted_past_the_output() {
        let mut a = LinkAgent::new(30_000);
        let l0 = a.add_link(1, Side::Below, false).unwrap();
        let l1 = a.add_link(2, Side::Below, false).unwrap();
        let l2 = a.add_link(3, Side::Below, true).unwrap();
        assert!(matches!(
            a.add_link(1, Side::Below, false),
            Err(OnepipeError::DuplicatePort(1))
        ));
        assert!(a
            .decide(0, &[(l0, 1, 100), (l1, 1, 100), (l2, 1, 50)], 100)
            .is_empty());
        // link 1's count stays; link 0's moves with a standing barrier (alive); the joining
        // link is still behind the output.
        assert!(a
            .decide(20_000, &[(l0, 5, 100), (l1, 1, 100), (l2, 2, 90)], 100)
            .is_empty());
        let ev = a.decide(30_000, &[(l0, 9, 100), (l1, 1, 100), (l2, 3, 150)], 100);
        assert_eq!(
            ev,
            [
                LinkEvent::Removed { link: l1, port: 2 },
                LinkEvent::Joined { link: l2, port: 3 }
            ]
        );
        assert_eq!(a.state(l1), Some(LinkState::Dead));
        let ports: Vec<u16> = a.entries().iter().map(|e| e.0).collect();
        assert_eq!(ports, [1, 3]);
        // the dead link's number is reused by the next link
        assert_eq!(a.add_link(9, Side::Below, true).unwrap(), l1);
    }

    #[test]
    fn serial_order_wraps() {
        assert!(serial_lt(0xffff_ff00, 0x100));
        assert!(!serial_lt(0x100, 0xffff_ff00));
    }
}
