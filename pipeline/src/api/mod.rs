//! The runtime API: BfRt's verbs on a [`Switch`] — table entries and default actions
//! ([`tables`]), registers, register params, counters and meters ([`objects`]), multicast,
//! mirror sessions, port queues and digests ([`tm`]).
//!
//! Objects are named as in BfRt: `SwitchIngress.forward`, `pipe.SwitchIngress.forward`, or a
//! bare `forward` when unambiguous. Key fields and action parameters are named too. Every
//! request targets all pipes that run the object's pipeline ([`PipeSel::All`]) or one pipe.

pub mod cells;
pub mod control_state;
mod error;
pub mod filters;
pub mod idle;
mod names;
pub mod objects;
pub mod profiles;
pub mod tables;
pub mod tm;
pub mod value_sets;

pub use error::ApiError;
pub use objects::{CounterValue, RegisterValue};
pub use profiles::ProfileView;
pub use tables::TableEntry;

use crate::switch::Switch;
use names::Candidate;

/// Which pipes a request applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PipeSel {
    /// Every pipe running the object's pipeline.
    #[default]
    All,
    /// One hardware pipe.
    Pipe(u16),
}

impl Switch {
    /// The hardware pipes a request on an object of `pipeline` applies to.
    pub(crate) fn target_pipes(
        &self,
        sel: PipeSel,
        pipeline: usize,
        name: &str,
    ) -> Result<Vec<usize>, ApiError> {
        match sel {
            PipeSel::All => Ok((0..self.pipes.len())
                .filter(|p| self.pipes[*p].pipeline == pipeline)
                .collect()),
            PipeSel::Pipe(p) => {
                let Some(st) = self.pipes.get(p as usize) else {
                    return Err(ApiError::BadPipe {
                        pipe: p,
                        pipes: self.pipes.len() as u16,
                    });
                };
                if st.pipeline != pipeline {
                    return Err(ApiError::WrongPipe {
                        pipe: p,
                        name: name.to_string(),
                        running: self.prog.pipelines[st.pipeline].name.clone(),
                    });
                }
                Ok(vec![p as usize])
            }
        }
    }

    /// Resolve an object name of one kind; `names` lists each pipeline's objects of that kind.
    pub(crate) fn resolve_name<'a, F, I>(
        &'a self,
        kind: &'static str,
        name: &str,
        names: F,
    ) -> Result<(usize, usize), ApiError>
    where
        F: Fn(&'a crate::ir::Pipeline) -> I,
        I: Iterator<Item = &'a str> + Clone + 'a,
    {
        self.resolve_named(kind, name, names, |_, _| true)
    }

    /// [`Switch::resolve_name`] among the objects `named(pipeline, index)` keeps: the others
    /// (those bound to an `@hidden` table, see [`crate::ir::Pipeline::table_named`]) are not
    /// the control plane's to name.
    pub(crate) fn resolve_named<'a, F, I, K>(
        &'a self,
        kind: &'static str,
        name: &str,
        names: F,
        named: K,
    ) -> Result<(usize, usize), ApiError>
    where
        F: Fn(&'a crate::ir::Pipeline) -> I,
        I: Iterator<Item = &'a str> + Clone + 'a,
        K: Fn(&'a crate::ir::Pipeline, usize) -> bool + Copy + 'a,
    {
        // Only pipelines that some pipe runs are candidates.
        let used: Vec<usize> = {
            let mut v: Vec<usize> = self.pipes.iter().map(|p| p.pipeline).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let prog = &self.prog;
        let cands = used.iter().flat_map(|&pl| {
            let p = &prog.pipelines[pl];
            names(p)
                .enumerate()
                .filter(move |(i, _)| named(p, *i))
                .map(move |(i, n)| Candidate {
                    pipeline: pl,
                    pipeline_name: &p.name,
                    index: i,
                    name: n,
                })
        });
        names::resolve(kind, name, cands, used.len() > 1)
    }
}
