//! SetForwardingPipelineConfig's work: compiling a device config (the P4 source) and checking
//! the P4Info sent with it, and carrying table state into a new program
//! (RECONCILE_AND_COMMIT).

use pipeline::switch::Switch;
use tonic::Status;

use super::super::p4info;
use super::super::proto::p4::config::v1 as pi;
use super::super::proto::p4::v1 as p4v1;
use super::Pipeline;

/// One device config compiles at a time: a compile of a large (or hostile) program takes
/// seconds and up to gigabytes, and several clients verifying at once would multiply that in
/// the switch's process.
static COMPILING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Compiles a device config and checks the P4Info sent with it.
pub(super) fn verify(
    compile: &p4::compile::CompileOptions,
    cfg: &p4v1::ForwardingPipelineConfig,
) -> Result<Pipeline, Status> {
    let size = cfg.p4_device_config.len() as u64;
    if size > p4::source::MAX_SOURCE_BYTES {
        return Err(Status::invalid_argument(format!(
            "p4_device_config is too large ({size} bytes; the limit is {} bytes, as for a \
             source file `pisa check` reads)",
            p4::source::MAX_SOURCE_BYTES
        )));
    }
    let text = std::str::from_utf8(&cfg.p4_device_config).map_err(|_| {
        Status::invalid_argument(
            "p4_device_config must be the P4 program's source (UTF-8 text); pisa compiles it",
        )
    })?;
    if text.trim().is_empty() {
        return Err(Status::invalid_argument(
            "p4_device_config is empty: send the P4 program's source",
        ));
    }
    // A compile that panicked left nothing behind the lock to repair.
    let _one = COMPILING.lock().unwrap_or_else(|e| e.into_inner());
    let program = p4info::compile_source("device_config.p4", text, compile).map_err(|d| {
        Status::invalid_argument(format!("the device config does not compile:\n{d}"))
    })?;
    if let Some(given) = &cfg.p4info {
        check_p4info(given, &program.p4info).map_err(Status::invalid_argument)?;
    }
    Ok(Pipeline::new(
        program,
        cfg.p4_device_config.clone(),
        cfg.cookie.as_ref().map(|c| c.cookie),
    ))
}

/// One object a P4Info lists, as its checks compare it: id, name, and (action profiles) what
/// the controller relies on besides.
type Listed = (u32, String, String);

/// The objects of one kind, sorted; an object listed twice is an error.
fn listed<'a>(
    what: &str,
    it: impl Iterator<Item = (&'a Option<pi::Preamble>, String)>,
) -> Result<Vec<Listed>, String> {
    let mut v: Vec<Listed> = it
        .filter_map(|(p, extra)| p.as_ref().map(|p| (p.id, p.name.clone(), extra)))
        .collect();
    v.sort();
    if let Some(w) = v.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(format!(
            "the P4Info lists {what} {} twice",
            named(&w[0].1, w[0].0)
        ));
    }
    Ok(v)
}

/// `` `name` (id 0x…) ``, the name cut to a bounded length.
fn named(name: &str, id: u32) -> String {
    format!("`{}` (id {id:#x})", p4::diag::bounded(name))
}

/// What a controller relies on in an action profile besides its name: the tables it serves,
/// whether it is a selector, its size and largest group.
fn profile_shape(a: &pi::ActionProfile) -> String {
    let mut tables = a.table_ids.clone();
    tables.sort_unstable();
    let tables: Vec<String> = tables.iter().map(|t| format!("{t:#x}")).collect();
    let kind = if a.with_selector {
        format!(
            "a selector of groups of at most {} members",
            a.max_group_size
        )
    } else {
        "a profile without selector".to_string()
    };
    format!(
        "{kind}, {} members, for table(s) {}",
        a.size,
        tables.join(", ")
    )
}

/// A P4Info sent by a controller must name pisa's tables, actions and action profiles with the
/// same ids (the profiles with the same sizes and tables), and may list only externs pisa's
/// has (with the same ids).
fn check_p4info(given: &pi::P4Info, ours: &pi::P4Info) -> Result<(), String> {
    fn plain<'a, T: 'a>(
        v: &'a [T],
        pre: impl Fn(&'a T) -> &'a Option<pi::Preamble> + 'a,
    ) -> impl Iterator<Item = (&'a Option<pi::Preamble>, String)> + 'a {
        v.iter().map(move |t| (pre(t), String::new()))
    }
    fn profiles(i: &pi::P4Info) -> Vec<(&Option<pi::Preamble>, String)> {
        i.action_profiles
            .iter()
            .map(|a| (&a.preamble, profile_shape(a)))
            .collect()
    }
    // Tables, actions and action profiles must be the same; of the externs the controller may
    // know fewer (a P4Info listing TNA registers as Tofino externs has no `registers`), but
    // not others.
    let kinds = [
        (
            "tables",
            "table",
            true,
            listed("table", plain(&given.tables, |t| &t.preamble))?,
            listed("table", plain(&ours.tables, |t| &t.preamble))?,
        ),
        (
            "actions",
            "action",
            true,
            listed("action", plain(&given.actions, |t| &t.preamble))?,
            listed("action", plain(&ours.actions, |t| &t.preamble))?,
        ),
        (
            "action profiles",
            "action profile",
            true,
            listed("action profile", profiles(given).into_iter())?,
            listed("action profile", profiles(ours).into_iter())?,
        ),
        (
            "counters",
            "counter",
            false,
            listed("counter", plain(&given.counters, |t| &t.preamble))?,
            listed("counter", plain(&ours.counters, |t| &t.preamble))?,
        ),
        (
            "direct counters",
            "direct counter",
            false,
            listed(
                "direct counter",
                plain(&given.direct_counters, |t| &t.preamble),
            )?,
            listed(
                "direct counter",
                plain(&ours.direct_counters, |t| &t.preamble),
            )?,
        ),
        (
            "registers",
            "register",
            false,
            listed("register", plain(&given.registers, |t| &t.preamble))?,
            listed("register", plain(&ours.registers, |t| &t.preamble))?,
        ),
    ];
    for (what, one, exact, g, o) in kinds {
        if let Some(why) = first_difference(one, exact, &g, &o) {
            return Err(format!(
                "the P4Info's {what} differ from the program's: {why}; send the P4Info \
                 `pisa p4info` makes of this program"
            ));
        }
    }
    Ok(())
}

/// The first difference between the P4Info's objects `g` and the program's `o`, in words
/// (`exact`: the program's must all be there too).
fn first_difference(one: &str, exact: bool, g: &[Listed], o: &[Listed]) -> Option<String> {
    // Both lists are sorted by id, each id once ([`listed`]).
    let find = |l: &Listed, in_: &[Listed]| {
        in_.binary_search_by_key(&l.0, |x| x.0)
            .ok()
            .map(|i| in_[i].clone())
    };
    for x in g {
        match find(x, o) {
            None => return Some(format!("{one} {} is not in the program", named(&x.1, x.0))),
            Some(y) if y.1 != x.1 => {
                return Some(format!(
                    "the P4Info names {one} id {:#x} `{}`, the program `{}`",
                    x.0,
                    p4::diag::bounded(&x.1),
                    p4::diag::bounded(&y.1)
                ))
            }
            Some(y) if y.2 != x.2 => {
                return Some(format!(
                    "{one} {}: the P4Info says {}, the program has {}",
                    named(&x.1, x.0),
                    p4::diag::bounded(&x.2),
                    p4::diag::bounded(&y.2)
                ))
            }
            Some(_) => {}
        }
    }
    let missing = o.iter().find(|y| find(y, g).is_none()).filter(|_| exact)?;
    Some(format!(
        "the program's {one} {} is not in the P4Info",
        named(&missing.1, missing.0)
    ))
}

/// The forwarding state of `old` carried into `new` (RECONCILE_AND_COMMIT): the traffic
/// manager's (multicast groups, clone sessions), the members and groups of each action profile
/// the new program still has, then the entries and default actions of its tables (entries
/// that point at a member or a group after those), and the members of its parser value sets.
/// What cannot carry over (another target, an action the table lost, a group larger than the
/// new selector allows, a table now too small) is refused with the object and the reason.
pub(super) fn migrate(old: &Switch, new: &mut Switch) -> Result<(), String> {
    let prog = new.program().clone();
    if old.program().target != prog.target {
        return Err(format!(
            "the new program is for {:?}, the running one for {:?}: the ports, multicast \
             groups and mirror sessions of one target do not carry over to the other",
            prog.target,
            old.program().target
        ));
    }
    new.take_tm_state(old);
    for pl in &prog.pipelines {
        for vs in &pl.value_sets {
            migrate_value_set(old, new, &vs.name)?;
        }
        for ap in &pl.action_profiles {
            migrate_profile(old, new, &ap.name)?;
        }
        for t in &pl.tables {
            if !t.entries_const {
                migrate_entries(old, new, &t.name)?;
            }
            if !t.default_action_const {
                migrate_default(old, new, &t.name)?;
            }
        }
    }
    Ok(())
}

/// The members and groups of profile `name` (when `old` has it) written into `new`.
fn migrate_profile(old: &Switch, new: &mut Switch, name: &str) -> Result<(), String> {
    use pipeline::api::PipeSel;
    let Ok(view) = old.profile_read(PipeSel::All, name) else {
        return Ok(());
    };
    for (id, action, params) in &view.members {
        let p: Vec<(&str, u128)> = params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        new.profile_member_set(PipeSel::All, name, *id, action, &p)
            .map_err(|e| {
                format!(
                    "action profile `{name}`: member {id} (action `{action}`) cannot be kept \
                     in the new program: {e}"
                )
            })?;
    }
    for (id, members) in &view.groups {
        new.profile_group_set(PipeSel::All, name, *id, members)
            .map_err(|e| {
                format!(
                    "action profile `{name}`: group {id} ({} member(s)) cannot be kept in the \
                     new program: {e}",
                    members.len()
                )
            })?;
    }
    Ok(())
}

/// The entries of table `name` (when `old` has it) added to `new`: those that name an action
/// as they are, those that point at a profile's member or group as references.
fn migrate_entries(old: &Switch, new: &mut Switch, name: &str) -> Result<(), String> {
    use pipeline::api::PipeSel;
    use pipeline::table::profile::EntryRef;
    let Ok(entries) = old.table_entries(PipeSel::All, name) else {
        return Ok(());
    };
    for (i, e) in entries.iter().enumerate() {
        let id = e.params.first().map(|(_, v)| *v as u32);
        let r = match (e.action.as_str(), id) {
            ("$member", Some(m)) => Some(EntryRef::Member(m)),
            ("$group", Some(g)) => Some(EntryRef::Group(g)),
            _ => None,
        };
        let done = match r {
            Some(r) => {
                let keys: Vec<(&str, pipeline::ir::KeyMatch)> =
                    e.keys.iter().map(|(k, m)| (k.as_str(), *m)).collect();
                new.table_add_ref(PipeSel::All, name, &keys, e.priority, r)
            }
            None => new.table_add_entry(PipeSel::All, name, e),
        };
        done.map_err(|err| {
            format!(
                "table `{name}`: entry {} of {} (action `{}`) cannot be kept in the new \
                 program: {err}",
                i + 1,
                entries.len(),
                e.action
            )
        })?;
    }
    Ok(())
}

/// The members of parser value set `name` (when `old` has it) added to `new`.
fn migrate_value_set(old: &Switch, new: &mut Switch, name: &str) -> Result<(), String> {
    use pipeline::api::PipeSel;
    let Ok(entries) = old.value_set_entries(PipeSel::All, name) else {
        return Ok(());
    };
    // Every pipe holds the same members (P4Runtime writes them to all): the first pipe's.
    let first = entries.iter().map(|e| e.pipe).min();
    for e in entries.iter().filter(|e| Some(e.pipe) == first) {
        new.value_set_add(PipeSel::All, name, &e.fields)
            .map_err(|err| {
                format!(
                    "parser value set `{name}`: a member cannot be kept in the new program: {err}"
                )
            })?;
    }
    Ok(())
}

/// The default action of table `name` in `old`, set in `new`.
fn migrate_default(old: &Switch, new: &mut Switch, name: &str) -> Result<(), String> {
    use pipeline::api::PipeSel;
    let Ok((a, params)) = old.table_get_default(PipeSel::All, name) else {
        return Ok(());
    };
    let p: Vec<(&str, u128)> = params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    new.table_set_default(PipeSel::All, name, &a, &p)
        .map_err(|err| {
            format!(
                "table `{name}`: the default action `{a}` cannot be kept in the new program: {err}"
            )
        })
}
