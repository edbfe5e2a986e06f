//! LPF and WRED verbs: a cell's spec written (indexed filters by index, direct ones by the
//! key of their table's entry, as bf-rt's `$LPF_SPEC_*` / `$WRED_SPEC_*` fields) and read back
//! with the cell's current value.

use super::{ApiError, PipeSel};
use crate::externs::filter::FilterSpec;
use crate::ir::{self, FilterKind, KeyMatch};
use crate::switch::Switch;

/// One filter cell on one pipe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilterCell {
    pub pipe: u16,
    /// None: never written (an LPF passes its input through, a WRED never drops).
    pub spec: Option<FilterSpec>,
    /// The LPF's value, or WRED's average.
    pub value: f64,
}

impl Switch {
    fn filter_ref(&self, name: &str) -> Result<(usize, usize), ApiError> {
        self.resolve_named(
            "filter",
            name,
            |p| p.filters.iter().map(|f| f.name.as_str()),
            |p, i| p.direct_named(p.filters[i].direct_table),
        )
    }

    /// A spec of the filter's own kind (an LPF spec for an LPF) that the driver can encode
    /// ([`FilterSpec::validate`]): every way a spec enters goes through here.
    fn check_spec(f: &ir::Filter, spec: &FilterSpec, target: ir::Target) -> Result<(), ApiError> {
        spec.validate(target).map_err(|error| ApiError::Filter {
            name: f.name.clone(),
            error,
        })?;
        match (f.kind, spec) {
            (FilterKind::Lpf, FilterSpec::Lpf(_))
            | (FilterKind::Wred { .. }, FilterSpec::Wred(_)) => Ok(()),
            (FilterKind::Lpf, _) => Err(ApiError::WrongForm {
                kind: "filter",
                name: f.name.clone(),
                actual: "an LPF",
                form: "LPF",
            }),
            (FilterKind::Wred { .. }, _) => Err(ApiError::WrongForm {
                kind: "filter",
                name: f.name.clone(),
                actual: "a WRED",
                form: "WRED",
            }),
        }
    }

    /// Writes cell `index` of an indexed filter on every selected pipe (its state restarts).
    pub fn filter_set(
        &mut self,
        pipes: PipeSel,
        name: &str,
        index: u32,
        spec: FilterSpec,
    ) -> Result<(), ApiError> {
        let (pl, fi) = self.filter_ref(name)?;
        let f = self.prog.pipelines[pl].filters[fi].clone();
        Self::check_spec(&f, &spec, self.prog.target)?;
        if f.direct_table.is_some() {
            return Err(ApiError::WrongForm {
                kind: "filter",
                name: f.name,
                actual: "direct",
                form: "direct",
            });
        }
        if index >= f.size {
            return Err(ApiError::IndexOutOfRange {
                kind: "filter",
                name: f.name,
                index: index.into(),
                size: f.size,
            });
        }
        for p in self.target_pipes(pipes, pl, &f.name)? {
            self.pipes[p].rt.filters[fi].set(index, spec, self.prog.target);
        }
        Ok(())
    }

    /// Writes the direct filter cell of `table`'s entry with this key.
    pub fn direct_filter_set(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        spec: FilterSpec,
    ) -> Result<(), ApiError> {
        let (pl, t, km) = self.table_key(table, keys)?;
        let prog = self.prog.clone();
        let p_ir = &prog.pipelines[pl];
        let tid = ir::TableId(t as u32);
        let Some(fi) = p_ir
            .filters
            .iter()
            .position(|f| f.direct_table == Some(tid))
        else {
            return Err(ApiError::Unknown {
                kind: "direct filter of table",
                name: p_ir.tables[t].name.clone(),
                suggestions: Vec::new(),
            });
        };
        Self::check_spec(&p_ir.filters[fi], &spec, prog.target)?;
        for p in self.target_pipes(pipes, pl, &p_ir.tables[t].name)? {
            let h = self.entry_handle(p, t, &p_ir.tables[t], &km, priority)?;
            self.pipes[p].rt.filters[fi].set(h.0, spec, prog.target);
        }
        Ok(())
    }

    /// Cell `index` of a filter on every selected pipe.
    pub fn filter_read(
        &self,
        pipes: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<FilterCell>, ApiError> {
        let (pl, fi) = self.filter_ref(name)?;
        let f = &self.prog.pipelines[pl].filters[fi];
        let mut out = Vec::new();
        for p in self.target_pipes(pipes, pl, &f.name)? {
            let cells = &self.pipes[p].rt.filters[fi];
            let Some(value) = cells.value(index) else {
                return Err(ApiError::IndexOutOfRange {
                    kind: "filter",
                    name: f.name.clone(),
                    index: index.into(),
                    size: cells.len() as u32,
                });
            };
            out.push(FilterCell {
                pipe: p as u16,
                spec: cells.spec(index),
                value,
            });
        }
        Ok(out)
    }
}
