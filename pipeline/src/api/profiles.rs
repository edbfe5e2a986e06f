//! Action profile members, selector groups, and the entries that point at them (BfRt's
//! `$ACTION_MEMBER_ID` and `$SELECTOR_GROUP_ID`). A profile shared by several tables is one
//! object: every write goes to each of its tables, so they never disagree.

use crate::ir::{ActionCall, KeyMatch, Value};
use crate::switch::Switch;
use crate::table::profile::{EntryRef, ProfileError};

use super::tables::{build_call, build_keys, named_params, table_error, TableRef};
use super::{ApiError, PipeSel};

/// A member as read back: id, action name, parameters by name.
pub type MemberView = (u32, String, Vec<(String, Value)>);

/// A profile's members and groups as read back (from one pipe).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProfileView {
    /// Ordered by id.
    pub members: Vec<MemberView>,
    /// Group id and its member ids; ordered by id.
    pub groups: Vec<(u32, Vec<u32>)>,
}

/// A resolved profile: pipeline, index into `action_profiles`.
#[derive(Clone, Copy)]
struct ProfileRef {
    pl: usize,
    ap: usize,
}

impl Switch {
    /// A profile by its name or its selector's name.
    fn profile_ref(&self, name: &str) -> Result<ProfileRef, ApiError> {
        let by_profile = self.resolve_name("action profile", name, |p| {
            p.action_profiles.iter().map(|a| a.name.as_str())
        });
        let (pl, ap) = match by_profile {
            Err(ApiError::Unknown { .. }) => {
                // The selector's name stands for its profile (BfRt shows both).
                self.resolve_name("action profile", name, |p| {
                    p.action_profiles
                        .iter()
                        .map(|a| a.selector.as_ref().map_or("", |s| s.name.as_str()))
                })
                .map_err(|_| {
                    by_profile.err().unwrap_or(ApiError::Unknown {
                        kind: "action profile",
                        name: name.to_string(),
                        suggestions: Vec::new(),
                    })
                })?
            }
            other => other?,
        };
        Ok(ProfileRef { pl, ap })
    }

    fn profile_tables(&self, r: ProfileRef) -> Vec<usize> {
        self.prog.pipelines[r.pl].action_profiles[r.ap]
            .tables
            .iter()
            .map(|t| t.index())
            .collect()
    }

    fn profile_error(&self, r: ProfileRef, error: ProfileError) -> ApiError {
        ApiError::Profile {
            profile: self.prog.pipelines[r.pl].action_profiles[r.ap].name.clone(),
            error,
        }
    }

    /// Runs `f` on the profile of every table of `r` in every target pipe; on an error the
    /// pipes and tables already written are put back as they were.
    fn profile_write(
        &mut self,
        pipes: PipeSel,
        r: ProfileRef,
        f: impl Fn(&mut crate::table::profile::Profile) -> Result<(), ProfileError>,
    ) -> Result<(), ApiError> {
        let name = self.prog.pipelines[r.pl].action_profiles[r.ap].name.clone();
        let targets = self.target_pipes(pipes, r.pl, &name)?;
        let tables = self.profile_tables(r);
        // A refused write leaves a profile as it was (each check comes before any change), so
        // only the copies written before a later one refuses need their old state back: with
        // one copy nothing is saved (a write costs the same however many members and groups
        // the profile holds).
        let copies = targets.len() * tables.len();
        let mut saved = Vec::new();
        for &p in &targets {
            for &t in &tables {
                let Some(prof) = self.pipes[p].tables[t].table.profile_mut() else {
                    continue;
                };
                if copies > 1 {
                    saved.push((p, t, prof.clone()));
                }
                if let Err(e) = f(prof) {
                    for (p, t, old) in saved {
                        if let Some(x) = self.pipes[p].tables[t].table.profile_mut() {
                            *x = old;
                        }
                    }
                    return Err(self.profile_error(r, e));
                }
            }
        }
        Ok(())
    }

    /// Adds member `member` to `profile`, or changes its action and data.
    pub fn profile_member_set(
        &mut self,
        pipes: PipeSel,
        profile: &str,
        member: u32,
        action: &str,
        params: &[(&str, Value)],
    ) -> Result<(), ApiError> {
        let r = self.profile_ref(profile)?;
        let pl = &self.prog.pipelines[r.pl];
        let tables = self.profile_tables(r);
        let t = &pl.tables[*tables
            .first()
            .ok_or_else(|| self.profile_error(r, ProfileError::NoMember(member)))?];
        let call = build_call(pl, t, action, params, false)?;
        self.profile_write(pipes, r, |p| p.member_set(member, call.clone()))
    }

    /// Refuses when a table entry of `r` in a target pipe points at `x`.
    fn unreferenced(&self, pipes: PipeSel, r: ProfileRef, x: EntryRef) -> Result<(), ApiError> {
        let name = self.prog.pipelines[r.pl].action_profiles[r.ap].name.clone();
        let targets = self.target_pipes(pipes, r.pl, &name)?;
        let used = targets.iter().any(|&p| {
            self.profile_tables(r)
                .iter()
                .any(|&t| self.pipes[p].tables[t].table.references(x))
        });
        if !used {
            return Ok(());
        }
        Err(self.profile_error(
            r,
            match x {
                EntryRef::Member(m) => ProfileError::MemberInUse(m),
                EntryRef::Group(g) => ProfileError::GroupInUse(g),
            },
        ))
    }

    /// Removes a member (refused while an entry or a group uses it).
    pub fn profile_member_delete(
        &mut self,
        pipes: PipeSel,
        profile: &str,
        member: u32,
    ) -> Result<(), ApiError> {
        let r = self.profile_ref(profile)?;
        self.unreferenced(pipes, r, EntryRef::Member(member))?;
        self.profile_write(pipes, r, |p| p.member_delete(member))
    }

    /// Creates group `group` of a selector, or replaces its members; emptying a group that
    /// table entries point at is refused (as the driver does).
    pub fn profile_group_set(
        &mut self,
        pipes: PipeSel,
        profile: &str,
        group: u32,
        members: &[u32],
    ) -> Result<(), ApiError> {
        let r = self.profile_ref(profile)?;
        if members.is_empty() {
            self.unreferenced(pipes, r, EntryRef::Group(group))
                .map_err(|e| match e {
                    ApiError::Profile {
                        error: ProfileError::GroupInUse(g),
                        ..
                    } => self.profile_error(r, ProfileError::EmptyingUsedGroup(g)),
                    e => e,
                })?;
        }
        self.profile_write(pipes, r, |p| p.group_set(group, members))?;
        self.reset_member_status(pipes, r, group, members.len())
    }

    /// After a group write, as the driver does: its members' status bits 1 (active), the rest
    /// of its slot 0.
    fn reset_member_status(
        &mut self,
        pipes: PipeSel,
        r: ProfileRef,
        group: u32,
        len: usize,
    ) -> Result<(), ApiError> {
        let ap = &self.prog.pipelines[r.pl].action_profiles[r.ap];
        let Some(mgs) = ap.selector.as_ref().map(|s| s.max_group_size as usize) else {
            return Ok(());
        };
        let name = ap.name.clone();
        let tables = self.profile_tables(r);
        for p in self.target_pipes(pipes, r.pl, &name)? {
            let pipe = &mut self.pipes[p];
            let bits = tables
                .iter()
                .find_map(|&t| pipe.tables[t].table.profile()?.status_bits(group));
            let Some((reg, base)) = bits else { continue };
            let Some(cells) = pipe.rt.registers.get_mut(reg) else {
                continue;
            };
            let base = base as usize;
            for (i, c) in cells.lo.iter_mut().skip(base).take(mgs).enumerate() {
                *c = u64::from(i < len);
            }
        }
        Ok(())
    }

    /// Removes a group (refused while an entry uses it).
    pub fn profile_group_delete(
        &mut self,
        pipes: PipeSel,
        profile: &str,
        group: u32,
    ) -> Result<(), ApiError> {
        let r = self.profile_ref(profile)?;
        self.unreferenced(pipes, r, EntryRef::Group(group))?;
        self.profile_write(pipes, r, |p| p.group_delete(group))
    }

    /// A profile's members and groups in the first pipe that runs it (or `pipe`).
    pub fn profile_read(&self, pipes: PipeSel, profile: &str) -> Result<ProfileView, ApiError> {
        let r = self.profile_ref(profile)?;
        let pl = &self.prog.pipelines[r.pl];
        let name = pl.action_profiles[r.ap].name.clone();
        let p = *self
            .target_pipes(pipes, r.pl, &name)?
            .first()
            .ok_or_else(|| self.profile_error(r, ProfileError::NoSelector))?;
        let mut view = ProfileView::default();
        let Some(t) = self.profile_tables(r).first().copied() else {
            return Ok(view);
        };
        if let Some(prof) = self.pipes[p].tables[t].table.profile() {
            for (id, call) in prof.members() {
                let (a, params) = named_params(pl, call);
                view.members.push((id, a, params));
            }
            view.groups = prof.groups().map(|(g, m)| (g, m.to_vec())).collect();
        }
        view.members.sort_by_key(|m| m.0);
        view.groups.sort_by_key(|g| g.0);
        Ok(view)
    }

    /// Whether the profile holds member or group `x` in the first pipe that runs it (or
    /// `pipe`): a lookup, where [`Switch::profile_read`] copies every member and group.
    pub fn profile_holds(
        &self,
        pipes: PipeSel,
        profile: &str,
        x: EntryRef,
    ) -> Result<bool, ApiError> {
        let r = self.profile_ref(profile)?;
        let name = self.prog.pipelines[r.pl].action_profiles[r.ap].name.clone();
        let p = *self
            .target_pipes(pipes, r.pl, &name)?
            .first()
            .ok_or_else(|| self.profile_error(r, ProfileError::NoSelector))?;
        let Some(t) = self.profile_tables(r).first().copied() else {
            return Ok(false);
        };
        Ok(self.pipes[p].tables[t]
            .table
            .profile()
            .is_some_and(|prof| prof.holds(x)))
    }

    /// The table, its keys, and the pipes an entry pointing at a member or group goes to.
    fn prepare_ref(
        &self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        x: EntryRef,
    ) -> Result<(TableRef, Vec<KeyMatch>, Vec<usize>), ApiError> {
        let r = self.table_ref(table)?;
        self.check_mutable(r)?;
        let t = &self.prog.pipelines[r.pl].tables[r.t];
        let km = build_keys(t, keys)?;
        let targets = self.target_pipes(pipes, r.pl, &t.name)?;
        for &p in &targets {
            let prof = self.pipes[p].tables[r.t]
                .table
                .profile()
                .ok_or(ApiError::ProfileTable {
                    table: t.name.clone(),
                    why: "has no action profile: its entries name an action",
                })?;
            prof.exists(x).map_err(|error| ApiError::Profile {
                profile: t.name.clone(),
                error,
            })?;
        }
        Ok((r, km, targets))
    }

    /// Adds an entry that points at a member or a group.
    pub fn table_add_ref(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        x: EntryRef,
    ) -> Result<(), ApiError> {
        let (r, km, targets) = self.prepare_ref(pipes, table, keys, x)?;
        self.insert_all(r, &targets, &km, priority, &x.call())
    }

    /// Points an existing entry at another member or group.
    pub fn table_modify_ref(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        x: EntryRef,
    ) -> Result<(), ApiError> {
        let (r, km, targets) = self.prepare_ref(pipes, table, keys, x)?;
        let prog = self.prog.clone();
        let t = &prog.pipelines[r.pl].tables[r.t];
        for &p in &targets {
            if self.pipes[p].tables[r.t].table.get(&km, priority).is_none() {
                return Err(ApiError::EntryNotFound {
                    table: t.name.clone(),
                });
            }
        }
        for p in targets {
            let call: ActionCall = x.call();
            self.pipes[p].tables[r.t]
                .table
                .modify(&km, priority, call)
                .map_err(|e| table_error(t, e))?;
        }
        Ok(())
    }
}
