//! SetForwardingPipelineConfig's work: compiling a device config (the P4 source) and checking
//! the P4Info sent with it, and carrying table state into a new program
//! (RECONCILE_AND_COMMIT).

use pipeline::switch::Switch;
use tonic::Status;

use super::super::p4info;
use super::super::proto::p4::v1 as p4v1;
use super::Pipeline;

/// Compiles a device config and checks the P4Info sent with it.
pub(super) fn verify(
    compile: &p4::compile::CompileOptions,
    cfg: &p4v1::ForwardingPipelineConfig,
) -> Result<Pipeline, Status> {
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

/// A P4Info sent by a controller must name pisa's tables and actions with the same ids, and
/// may list only externs pisa's has (with the same ids).
fn check_p4info(
    given: &super::super::proto::p4::config::v1::P4Info,
    ours: &super::super::proto::p4::config::v1::P4Info,
) -> Result<(), String> {
    fn ids<'a>(
        it: impl Iterator<Item = &'a Option<super::super::proto::p4::config::v1::Preamble>>,
    ) -> Vec<(u32, String)> {
        let mut v: Vec<(u32, String)> = it.flatten().map(|p| (p.id, p.name.clone())).collect();
        v.sort();
        v
    }
    // Tables and actions must be the same; of the externs the controller may know fewer (a
    // P4Info listing TNA registers as Tofino externs has no `registers`), but not others.
    let pairs = [
        (
            "tables",
            ids(given.tables.iter().map(|t| &t.preamble)),
            ids(ours.tables.iter().map(|t| &t.preamble)),
        ),
        (
            "actions",
            ids(given.actions.iter().map(|t| &t.preamble)),
            ids(ours.actions.iter().map(|t| &t.preamble)),
        ),
        (
            "counters",
            ids(given.counters.iter().map(|t| &t.preamble)),
            ids(ours.counters.iter().map(|t| &t.preamble)),
        ),
        (
            "direct counters",
            ids(given.direct_counters.iter().map(|t| &t.preamble)),
            ids(ours.direct_counters.iter().map(|t| &t.preamble)),
        ),
        (
            "registers",
            ids(given.registers.iter().map(|t| &t.preamble)),
            ids(ours.registers.iter().map(|t| &t.preamble)),
        ),
    ];
    for (i, (what, g, o)) in pairs.into_iter().enumerate() {
        let exact = i < 2;
        let differs = if exact {
            g != o
        } else {
            g.iter().any(|x| !o.contains(x))
        };
        if differs {
            let diff = g
                .iter()
                .find(|x| !o.contains(x))
                .or_else(|| o.iter().find(|x| !g.contains(x)));
            return Err(format!(
                "the P4Info's {what} differ from the program's (first difference: {diff:?}); \
                 send the P4Info `pisa p4info` makes of this program"
            ));
        }
    }
    Ok(())
}

/// Table entries and default actions of `old` carried into `new` (RECONCILE_AND_COMMIT).
pub(super) fn migrate(old: &Switch, new: &mut Switch) -> Result<(), String> {
    use pipeline::api::PipeSel;
    let prog = new.program().clone();
    for pl in &prog.pipelines {
        for t in &pl.tables {
            if t.entries_const {
                continue;
            }
            let Ok(entries) = old.table_entries(PipeSel::All, &t.name) else {
                continue;
            };
            for e in entries {
                new.table_add_entry(PipeSel::All, &t.name, &e)
                    .map_err(|err| {
                        format!(
                            "table `{}`: an entry does not fit the new program: {err}",
                            t.name
                        )
                    })?;
            }
            if !t.default_action_const {
                if let Ok((a, params)) = old.table_get_default(PipeSel::All, &t.name) {
                    let p: Vec<(&str, u128)> =
                        params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                    new.table_set_default(PipeSel::All, &t.name, &a, &p)
                        .map_err(|err| format!("table `{}`: the default action does not fit the new program: {err}", t.name))?;
                }
            }
        }
    }
    Ok(())
}
