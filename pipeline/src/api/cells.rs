//! One counter or meter cell addressed by index, by the table entry whose direct resource it
//! is, or (direct counters) as a table's default entry's ([`Cell`]): a counter cell written (P4Runtime's `CounterEntry` /
//! `DirectCounterEntry` MODIFY), a meter cell's configuration read back or reset to
//! unconfigured (every packet GREEN).

use super::objects::check_index;
use super::{ApiError, PipeSel};
use crate::externs::meter::MeterConfig;
use crate::ir::{self, KeyMatch};
use crate::switch::Switch;

/// Which cell: an index of an indexed counter/meter, or the direct one of a table entry.
#[derive(Debug, Clone, Copy)]
pub enum Cell<'a> {
    Index {
        name: &'a str,
        index: u32,
    },
    Direct {
        table: &'a str,
        keys: &'a [(&'a str, KeyMatch)],
        priority: Option<u32>,
    },
    /// The direct counter cell of a table's default entry (what misses that run a counting
    /// default action count). Direct meters have none: a miss meters nothing.
    Default {
        table: &'a str,
    },
}

/// What kind of object a cell belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Of {
    Counter,
    Meter,
}

impl Switch {
    /// The object (counter or meter index in its pipeline) and, per selected pipe, the cell.
    fn cells(
        &self,
        pipes: PipeSel,
        of: Of,
        cell: Cell<'_>,
    ) -> Result<(usize, Vec<(usize, u32)>), ApiError> {
        let kind = if of == Of::Counter {
            "counter"
        } else {
            "meter"
        };
        match cell {
            Cell::Index { name, index } => {
                let (pl, i) = match of {
                    Of::Counter => self.counter_ref(name)?,
                    Of::Meter => self.meter_ref(name)?,
                };
                let p_ir = &self.prog.pipelines[pl];
                let (oname, size, direct) = match of {
                    Of::Counter => {
                        let c = &p_ir.counters[i];
                        (&c.name, c.size, c.direct_table.is_some())
                    }
                    Of::Meter => {
                        let m = &p_ir.meters[i];
                        (&m.name, m.size, m.direct_table.is_some())
                    }
                };
                if direct {
                    return Err(ApiError::WrongForm {
                        kind,
                        name: oname.clone(),
                        actual: "direct",
                        form: "direct",
                    });
                }
                check_index(kind, oname, index, size)?;
                let targets = self.target_pipes(pipes, pl, oname)?;
                Ok((i, targets.into_iter().map(|p| (p, index)).collect()))
            }
            Cell::Direct {
                table,
                keys,
                priority,
            } => {
                let (pl, t, km) = self.table_key(table, keys)?;
                let i = self.direct_of(of, pl, t)?;
                let p_ir = &self.prog.pipelines[pl];
                let mut out = Vec::new();
                for p in self.target_pipes(pipes, pl, &p_ir.tables[t].name)? {
                    let h = self.entry_handle(p, t, &p_ir.tables[t], &km, priority)?;
                    out.push((p, h.0));
                }
                Ok((i, out))
            }
            Cell::Default { table } => {
                let r = self.table_ref(table)?;
                let i = self.direct_of(of, r.pl, r.t)?;
                let t = &self.prog.pipelines[r.pl].tables[r.t];
                if of == Of::Meter {
                    return Err(ApiError::NoDefaultCell {
                        table: t.name.clone(),
                    });
                }
                let cell = crate::state::default_entry_cell(t) as u32;
                let targets = self.target_pipes(pipes, r.pl, &t.name)?;
                Ok((i, targets.into_iter().map(|p| (p, cell)).collect()))
            }
        }
    }

    /// The direct counter or meter of table `t` of pipeline `pl` (its index there).
    fn direct_of(&self, of: Of, pl: usize, t: usize) -> Result<usize, ApiError> {
        let p_ir = &self.prog.pipelines[pl];
        let tid = ir::TableId(t as u32);
        let found = match of {
            Of::Counter => p_ir
                .counters
                .iter()
                .position(|c| c.direct_table == Some(tid)),
            Of::Meter => p_ir.meters.iter().position(|m| m.direct_table == Some(tid)),
        };
        found.ok_or_else(|| ApiError::Unknown {
            kind: if of == Of::Counter {
                "direct counter of table"
            } else {
                "direct meter of table"
            },
            name: p_ir.tables[t].name.clone(),
            suggestions: Vec::new(),
        })
    }

    /// Reads a counter cell on every selected pipe (a direct one by its entry, or the default
    /// entry's).
    pub fn counter_cell_read(
        &self,
        pipes: PipeSel,
        cell: Cell<'_>,
    ) -> Result<Vec<super::CounterValue>, ApiError> {
        let (c, at) = self.cells(pipes, Of::Counter, cell)?;
        Ok(at
            .into_iter()
            .map(|(p, i)| {
                let st = &self.pipes[p].rt.counters[c];
                super::CounterValue {
                    pipe: p as u16,
                    packets: st.packets().get(i as usize).copied().unwrap_or(0),
                    bytes: st.bytes().get(i as usize).copied().unwrap_or(0),
                }
            })
            .collect())
    }

    /// Sets a counter cell to `packets` and `bytes` on every selected pipe.
    pub fn counter_write(
        &mut self,
        pipes: PipeSel,
        cell: Cell<'_>,
        packets: u64,
        bytes: u64,
    ) -> Result<(), ApiError> {
        let (c, at) = self.cells(pipes, Of::Counter, cell)?;
        for (p, i) in at {
            let st = &mut self.pipes[p].rt.counters[c];
            if let Some(x) = st.packets_mut().get_mut(i as usize) {
                *x = packets;
            }
            if let Some(x) = st.bytes_mut().get_mut(i as usize) {
                *x = bytes;
            }
        }
        Ok(())
    }

    /// A meter cell's configuration on every selected pipe (`None`: unconfigured).
    pub fn meter_config(
        &self,
        pipes: PipeSel,
        cell: Cell<'_>,
    ) -> Result<Vec<(u16, Option<MeterConfig>)>, ApiError> {
        let (m, at) = self.cells(pipes, Of::Meter, cell)?;
        Ok(at
            .into_iter()
            .map(|(p, i)| {
                let cfg = self.pipes[p].rt.meters[m].get(i).and_then(|s| s.config());
                (p as u16, cfg)
            })
            .collect())
    }

    /// Takes a meter cell back to unconfigured (every packet GREEN) on every selected pipe.
    pub fn meter_reset(&mut self, pipes: PipeSel, cell: Cell<'_>) -> Result<(), ApiError> {
        let (m, at) = self.cells(pipes, Of::Meter, cell)?;
        for (p, i) in at {
            let name = self.prog.pipelines[self.pipes[p].pipeline].meters[m]
                .name
                .clone();
            self.pipes[p].rt.meters[m]
                .reset(i)
                .map_err(|error| ApiError::Meter { name, error })?;
        }
        Ok(())
    }
}
