//! Watch ports of action selector group members (spec, "Action Profile Groups": a member with
//! `watch_port` is selected only while that port is up — the fast failover a switch does in
//! hardware). The server keeps each group as written (reads give it back so) and holds in the
//! switch the members whose watched port is up: at the write, and, through a thread that
//! follows the ports' link state (`pisa ctl link down`, the link model's faults), whenever a
//! watched port goes down or comes back. A group whose every member is down keeps them all
//! (an empty group cannot stay referenced by entries; its ports are down anyway).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use dataplane::switch::SwitchHandle;
use pipeline::api::PipeSel;

use super::super::codec::P4Error;
use super::super::device::Op;
use super::super::proto::p4::v1 as p4v1;
use super::super::request::group_watches;
use super::super::schema::Schema;
use super::weights::expanded;
use super::{Shared, CALL_TIMEOUT};

/// How often the watched ports' link state is looked at.
const WATCH_POLL: Duration = Duration::from_millis(10);

/// A group with watched members, as written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Watched {
    /// The profile's name (what the switch calls it).
    profile: String,
    /// Every member, in the order written.
    members: Vec<u32>,
    /// The members that watch a port, and the port.
    ports: Vec<(u32, u16)>,
    /// What the group written as [`p4v1::ActionProfileGroup`] gives back.
    pub written: p4v1::ActionProfileGroup,
    /// The members the switch holds now (`None`: not known, set at the next look).
    applied: Option<Vec<u32>>,
    /// The last set a rewrite of the group was refused with (logged once, retried quietly).
    refused: Option<Vec<u32>>,
}

/// Groups with watched members, by (profile id, group id).
pub(super) type Watches = BTreeMap<(u32, u32), Watched>;

/// Whether device port `port` is down (unknown ports count as up).
fn down(h: &SwitchHandle, port: u16) -> bool {
    h.link(port).is_ok_and(|l| {
        let c = l.config();
        c.tx.faults.link_down || c.rx.faults.link_down
    })
}

/// The members of `w` to hold in the switch with the ports' link state now: those not
/// watching a port that is down; all of them when none is left.
fn active(h: &SwitchHandle, members: &[u32], ports: &[(u32, u16)]) -> Vec<u32> {
    let up: Vec<u32> = members
        .iter()
        .copied()
        .filter(|m| {
            ports
                .iter()
                .find(|(x, _)| x == m)
                .is_none_or(|(_, p)| !down(h, *p))
        })
        .collect();
    match up.is_empty() {
        true => members.to_vec(),
        false => up,
    }
}

/// A group INSERT/MODIFY with watched members as written, `None` for any other update; a
/// member's `replicas` (weights) watch its port too.
pub(super) fn watched_of(
    s: &Schema,
    u: &p4v1::Update,
    replicas: &[(u32, Vec<u32>)],
) -> Result<Option<Watched>, P4Error> {
    use p4v1::update::Type as U;
    let Some(p4v1::entity::Entity::ActionProfileGroup(g)) =
        u.entity.as_ref().and_then(|e| e.entity.as_ref())
    else {
        return Ok(None);
    };
    if !matches!(U::try_from(u.r#type), Ok(U::Insert | U::Modify)) {
        return Ok(None);
    }
    let mut ports = group_watches(g)?;
    if ports.is_empty() {
        return Ok(None);
    }
    for (m, r) in replicas {
        if let Some(p) = ports.iter().find(|(x, _)| x == m).map(|(_, p)| *p) {
            ports.extend(r.iter().map(|r| (*r, p)));
        }
    }
    let members: Vec<u32> = g.members.iter().map(|m| m.member_id).collect();
    let Some(p) = s.profiles.get(&g.action_profile_id) else {
        return Ok(None);
    };
    Ok(Some(Watched {
        profile: p.name.clone(),
        members: expanded(&members, replicas),
        ports,
        written: g.clone(),
        applied: None,
        refused: None,
    }))
}

/// `op` (a group write of `w`, or steps with one) holding only the members active now.
pub(super) fn filter_op(h: &SwitchHandle, w: &mut Watched, op: Op) -> Op {
    match op {
        Op::Steps(steps) => Op::Steps(
            steps
                .into_iter()
                .map(|(op, undo)| (filter_op(h, w, op), undo))
                .collect(),
        ),
        Op::GroupSet {
            insert,
            profile,
            group,
            members,
        } => {
            let members = active(h, &members, &w.ports);
            w.applied = Some(members.clone());
            Op::GroupSet {
                insert,
                profile,
                group,
                members,
            }
        }
        other => other,
    }
}

/// Follows the watched ports until the server stops: a group whose active members changed
/// is written again with them.
pub(super) fn watch_pump(s: &Shared) {
    while !s.stop.load(Ordering::Acquire) {
        std::thread::sleep(WATCH_POLL);
        let Ok(extras) = s.extras.lock() else {
            return;
        };
        let changed: Vec<((u32, u32), String, Vec<u32>)> = extras
            .watched
            .iter()
            .filter_map(|(k, w)| {
                let now = active(&s.handle, &w.members, &w.ports);
                (w.applied.as_ref() != Some(&now)).then(|| (*k, w.profile.clone(), now))
            })
            .collect();
        drop(extras);
        for ((profile_id, group), profile, members) in changed {
            let m = members.clone();
            let done = s.handle.each(CALL_TIMEOUT, move |sw, _| {
                sw.profile_group_set(PipeSel::All, &profile, group, &m)
            });
            let Ok(mut x) = s.extras.lock() else {
                return;
            };
            let Some(w) = x.watched.get_mut(&(profile_id, group)) else {
                continue;
            };
            let failure = match done {
                Ok(r) if r.iter().all(|r| r.is_ok()) => {
                    tracing::info!(group, ?members, "watched ports changed: group rewritten");
                    w.applied = Some(members);
                    w.refused = None;
                    continue;
                }
                Ok(r) => format!("refused: {r:?}"),
                Err(e) => e.to_string(),
            };
            // Retried at every poll while the set differs; said once per set, not per poll.
            if w.refused.as_ref() != Some(&members) {
                tracing::warn!(group, ?members, error = %failure, "watched group rewrite failed");
                w.refused = Some(members);
            }
        }
    }
}
