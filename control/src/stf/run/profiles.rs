//! Action profiles and selectors from a script: `add PROFILE ADDR ACT(...)` sets member ADDR,
//! an entry points at a member (`ACT(ADDR)`, `$ACTION_MEMBER_ID:ADDR`) or at a selector group
//! (`$SELECTOR_GROUP_ID:G`), and the harness's `selector SEL(G) add|remove BIT...` edits
//! group G. The harness's bits are slots of the group's word, each an action-data address;
//! here a bit is the member of that address (the ADDR of `add PROFILE ADDR ...`).

use pipeline::api::{PipeSel, TableEntry};
use pipeline::table::profile::EntryRef;

use super::{pairs, Runner};
use crate::resolve::{self, ResolveError};
use crate::stf::{ActionSpec, Arg};

/// The member or group an `add` points its entry at, if any.
pub(super) fn entry_ref(action: &ActionSpec) -> Option<EntryRef> {
    match (action.group, action.member) {
        (Some(g), _) => Some(EntryRef::Group(g)),
        (None, Some(m)) => Some(EntryRef::Member(m)),
        (None, None) => None,
    }
}

impl Runner<'_> {
    /// An entry pointing at a member or group, as a [`TableEntry`] whose action is
    /// `$member` / `$group`.
    pub(super) fn resolve_ref(
        &self,
        table: &str,
        keys: &[Arg],
        priority: Option<u32>,
        target: EntryRef,
    ) -> Result<(String, TableEntry), ResolveError> {
        let (full, keys, priority) =
            resolve::resolve_ref_entry(&self.prog, table, pairs(keys), priority)?;
        let (name, id) = match target {
            EntryRef::Member(m) => ("$member", m),
            EntryRef::Group(g) => ("$group", g),
        };
        let entry = TableEntry {
            keys,
            priority,
            action: name.into(),
            params: vec![(name.into(), u128::from(id))],
        };
        Ok((full, entry))
    }

    /// `add PROFILE ADDR ACTION(...)`: member ADDR of an action profile.
    pub(super) fn add_member(
        &mut self,
        profile: &str,
        addr: Option<u32>,
        action: &ActionSpec,
    ) -> Result<(), String> {
        let addr = addr
            .ok_or("an action-profile entry needs its address (`add PROFILE ADDR ACTION(...)`)")?;
        let (full, act, params) =
            resolve::resolve_member(&self.prog, profile, &action.name, pairs(&action.args))
                .map_err(|e| e.to_string())?;
        let p: Vec<(&str, u128)> = params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        self.sw
            .profile_member_set(PipeSel::All, &full, addr, &act, &p)
            .map_err(|e| e.to_string())
    }

    /// `selector SEL(GROUP) add|remove MEMBER...`: the group's members, in ascending order
    /// (the harness's bit order), created empty when the script first names it.
    pub(super) fn selector(
        &mut self,
        selector: &str,
        pipes: PipeSel,
        group: u32,
        remove: bool,
        members: &[u32],
    ) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| format!("selector {selector}({group}): {e}");
        let r = resolve::find_profile(&self.prog, selector).map_err(|e| fail(&e))?;
        let profile = self.prog.pipelines[r.pipeline].action_profiles[r.index]
            .name
            .clone();
        let view = self
            .sw
            .profile_read(pipes, &profile)
            .map_err(|e| fail(&e))?;
        let mut set: std::collections::BTreeSet<u32> = view
            .groups
            .iter()
            .find(|(g, _)| *g == group)
            .map(|(_, m)| m.iter().copied().collect())
            .unwrap_or_default();
        for m in members {
            if remove {
                set.remove(m);
            } else {
                set.insert(*m);
            }
        }
        let set: Vec<u32> = set.into_iter().collect();
        self.sw
            .profile_group_set(pipes, &profile, group, &set)
            .map_err(|e| fail(&e))
    }
}
