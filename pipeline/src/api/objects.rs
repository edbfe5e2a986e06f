//! Register, register-param, counter and meter verbs. Indexed objects take an index; direct
//! ones (bound to a table) are addressed by the entry's key, like BfRt's direct resources.

use super::{ApiError, PipeSel};
use crate::externs::meter::MeterConfig;
use crate::ir::{self, KeyMatch, Value};
use crate::phv::mask;
use crate::state::new_register_state;
use crate::switch::Switch;

/// One register cell on one pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterValue {
    pub pipe: u16,
    pub lo: Value,
    /// The second word of a paired register (0 otherwise).
    pub hi: Value,
}

/// One counter cell on one pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterValue {
    pub pipe: u16,
    pub packets: u64,
    pub bytes: u64,
}

pub(super) fn check_index(
    kind: &'static str,
    name: &str,
    index: u32,
    size: u32,
) -> Result<(), ApiError> {
    if index >= size {
        return Err(ApiError::IndexOutOfRange {
            kind,
            name: name.to_string(),
            index: index.into(),
            size,
        });
    }
    Ok(())
}

impl Switch {
    fn register_ref(&self, name: &str) -> Result<(usize, usize), ApiError> {
        self.resolve_named(
            "register",
            name,
            |p| p.registers.iter().map(|r| r.name.as_str()),
            |p, i| p.direct_named(p.registers[i].direct_table),
        )
    }

    /// Read one register cell on every selected pipe.
    pub fn register_read(
        &self,
        pipes: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<RegisterValue>, ApiError> {
        let (pl, r) = self.register_ref(name)?;
        let reg = &self.prog.pipelines[pl].registers[r];
        check_index("register", &reg.name, index, reg.size)?;
        Ok(self
            .target_pipes(pipes, pl, &reg.name)?
            .into_iter()
            .map(|p| {
                let st = &self.pipes[p].rt.registers[r];
                RegisterValue {
                    pipe: p as u16,
                    lo: st.lo.get(index as usize).copied().unwrap_or(0) as Value,
                    hi: st.hi.get(index as usize).copied().unwrap_or(0) as Value,
                }
            })
            .collect())
    }

    /// Read the direct register `name` for the entry of `table` with this key (its cell is
    /// the entry's, as a direct counter's is).
    pub fn direct_register_read(
        &self,
        pipes: PipeSel,
        name: &str,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
    ) -> Result<Vec<RegisterValue>, ApiError> {
        let (pl, r) = self.register_ref(name)?;
        let (tpl, t, km) = self.table_key(table, keys)?;
        let p_ir = &self.prog.pipelines[pl];
        let reg = &p_ir.registers[r];
        if tpl != pl || reg.direct_table != Some(ir::TableId(t as u32)) {
            return Err(ApiError::Unknown {
                kind: "direct register of table",
                name: format!("{} (register {})", p_ir.tables[t].name, reg.name),
                suggestions: Vec::new(),
            });
        }
        let mut out = Vec::new();
        for p in self.target_pipes(pipes, pl, &reg.name)? {
            let h = self.entry_handle(p, t, &p_ir.tables[t], &km, priority)?;
            let st = &self.pipes[p].rt.registers[r];
            out.push(RegisterValue {
                pipe: p as u16,
                lo: st.lo.get(h.index()).copied().unwrap_or(0) as Value,
                hi: st.hi.get(h.index()).copied().unwrap_or(0) as Value,
            });
        }
        Ok(out)
    }

    /// Write one register cell (`hi` only for paired registers).
    pub fn register_write(
        &mut self,
        pipes: PipeSel,
        name: &str,
        index: u32,
        lo: Value,
        hi: Option<Value>,
    ) -> Result<(), ApiError> {
        let (pl, r) = self.register_ref(name)?;
        let reg = self.prog.pipelines[pl].registers[r].clone();
        check_index("register", &reg.name, index, reg.size)?;
        for (v, word) in [(Some(lo), "lo"), (hi, "hi")] {
            if let Some(v) = v {
                if v & !mask(reg.width) != 0 {
                    return Err(ApiError::ValueTooWide {
                        what: format!("register {} word {word}", reg.name),
                        value: v,
                        width: reg.width,
                    });
                }
            }
        }
        if hi.is_some() && !reg.paired {
            return Err(ApiError::WrongForm {
                kind: "register",
                name: reg.name.clone(),
                actual: "a single-word register",
                form: "single-word",
            });
        }
        for p in self.target_pipes(pipes, pl, &reg.name)? {
            let st = &mut self.pipes[p].rt.registers[r];
            st.lo[index as usize] = lo as u64;
            if let (Some(h), Some(c)) = (hi, st.hi.get_mut(index as usize)) {
                *c = h as u64;
            }
        }
        Ok(())
    }

    /// Every cell back to the register's initial value.
    pub fn register_reset(&mut self, pipes: PipeSel, name: &str) -> Result<(), ApiError> {
        let (pl, r) = self.register_ref(name)?;
        let reg = self.prog.pipelines[pl].registers[r].clone();
        for p in self.target_pipes(pipes, pl, &reg.name)? {
            self.pipes[p].rt.registers[r] = new_register_state(&reg);
        }
        Ok(())
    }

    /// Register size (cells).
    pub fn register_size(&self, name: &str) -> Result<u32, ApiError> {
        let (pl, r) = self.register_ref(name)?;
        Ok(self.prog.pipelines[pl].registers[r].size)
    }

    fn register_param_ref(&self, name: &str) -> Result<(usize, usize), ApiError> {
        self.resolve_name("register param", name, |p| {
            p.register_params.iter().map(|r| r.name.as_str())
        })
    }

    /// Set a `RegisterParam`'s value.
    pub fn register_param_set(
        &mut self,
        pipes: PipeSel,
        name: &str,
        value: Value,
    ) -> Result<(), ApiError> {
        let (pl, i) = self.register_param_ref(name)?;
        let rp = self.prog.pipelines[pl].register_params[i].clone();
        if value & !mask(rp.width) != 0 {
            return Err(ApiError::ValueTooWide {
                what: format!("register param {}", rp.name),
                value,
                width: rp.width,
            });
        }
        for p in self.target_pipes(pipes, pl, &rp.name)? {
            self.pipes[p].rt.register_params[i] = value;
        }
        Ok(())
    }

    /// A `RegisterParam`'s value (first selected pipe).
    pub fn register_param_get(&self, pipes: PipeSel, name: &str) -> Result<Value, ApiError> {
        let (pl, i) = self.register_param_ref(name)?;
        let p = self.first_pipe(pipes, pl, &self.prog.pipelines[pl].register_params[i].name)?;
        Ok(self.pipes[p].rt.register_params[i])
    }

    pub(super) fn counter_ref(&self, name: &str) -> Result<(usize, usize), ApiError> {
        self.resolve_named(
            "counter",
            name,
            |p| p.counters.iter().map(|c| c.name.as_str()),
            |p, i| p.direct_named(p.counters[i].direct_table),
        )
    }

    fn counter_cells(
        &self,
        pl: usize,
        c: usize,
        pipes: &[usize],
        index: usize,
    ) -> Vec<CounterValue> {
        pipes
            .iter()
            .map(|&p| {
                let st = &self.pipes[p].rt.counters[c];
                CounterValue {
                    pipe: p as u16,
                    packets: st.packets().get(index).copied().unwrap_or(0),
                    bytes: st.bytes().get(index).copied().unwrap_or(0),
                }
            })
            .filter(|_| pl < self.prog.pipelines.len())
            .collect()
    }

    /// Read an indexed counter cell on every selected pipe.
    pub fn counter_read(
        &self,
        pipes: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<CounterValue>, ApiError> {
        let (pl, c) = self.counter_ref(name)?;
        let ctr = &self.prog.pipelines[pl].counters[c];
        if ctr.direct_table.is_some() {
            return Err(ApiError::WrongForm {
                kind: "counter",
                name: ctr.name.clone(),
                actual: "direct",
                form: "direct",
            });
        }
        check_index("counter", &ctr.name, index, ctr.size)?;
        let targets = self.target_pipes(pipes, pl, &ctr.name)?;
        Ok(self.counter_cells(pl, c, &targets, index as usize))
    }

    /// Read the direct counter of `table` for the entry with this key.
    pub fn direct_counter_read(
        &self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
    ) -> Result<Vec<CounterValue>, ApiError> {
        let (pl, t, km) = self.table_key(table, keys)?;
        let p_ir = &self.prog.pipelines[pl];
        let tid = ir::TableId(t as u32);
        let Some(c) = p_ir
            .counters
            .iter()
            .position(|c| c.direct_table == Some(tid))
        else {
            return Err(ApiError::Unknown {
                kind: "direct counter of table",
                name: p_ir.tables[t].name.clone(),
                suggestions: Vec::new(),
            });
        };
        let mut out = Vec::new();
        for p in self.target_pipes(pipes, pl, &p_ir.tables[t].name)? {
            let h = self.entry_handle(p, t, &p_ir.tables[t], &km, priority)?;
            out.extend(self.counter_cells(pl, c, &[p], h.index()));
        }
        Ok(out)
    }

    /// Zero every cell of a counter (indexed or direct).
    pub fn counter_reset(&mut self, pipes: PipeSel, name: &str) -> Result<(), ApiError> {
        let (pl, c) = self.counter_ref(name)?;
        let cname = self.prog.pipelines[pl].counters[c].name.clone();
        for p in self.target_pipes(pipes, pl, &cname)? {
            let st = &mut self.pipes[p].rt.counters[c];
            st.packets_mut().fill(0);
            st.bytes_mut().fill(0);
        }
        Ok(())
    }

    pub(super) fn meter_ref(&self, name: &str) -> Result<(usize, usize), ApiError> {
        self.resolve_named(
            "meter",
            name,
            |p| p.meters.iter().map(|m| m.name.as_str()),
            |p, i| p.direct_named(p.meters[i].direct_table),
        )
    }

    /// Configure one cell of an indexed meter (rates in units per second, bursts in units).
    pub fn meter_set(
        &mut self,
        pipes: PipeSel,
        name: &str,
        index: u32,
        cfg: MeterConfig,
    ) -> Result<(), ApiError> {
        let (pl, m) = self.meter_ref(name)?;
        let meter = self.prog.pipelines[pl].meters[m].clone();
        if meter.direct_table.is_some() {
            return Err(ApiError::WrongForm {
                kind: "meter",
                name: meter.name,
                actual: "direct",
                form: "direct",
            });
        }
        check_index("meter", &meter.name, index, meter.size)?;
        let now = self.last_ts;
        for p in self.target_pipes(pipes, pl, &meter.name)? {
            self.pipes[p].rt.meters[m]
                .configure(index, cfg, now)
                .map_err(|error| ApiError::Meter {
                    name: meter.name.clone(),
                    error,
                })?;
        }
        Ok(())
    }

    /// Configure the direct meter of `table` for the entry with this key.
    pub fn direct_meter_set(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        cfg: MeterConfig,
    ) -> Result<(), ApiError> {
        let (pl, t, km) = self.table_key(table, keys)?;
        let prog = self.prog.clone();
        let p_ir = &prog.pipelines[pl];
        let tid = ir::TableId(t as u32);
        let Some(m) = p_ir.meters.iter().position(|m| m.direct_table == Some(tid)) else {
            return Err(ApiError::Unknown {
                kind: "direct meter of table",
                name: p_ir.tables[t].name.clone(),
                suggestions: Vec::new(),
            });
        };
        let now = self.last_ts;
        for p in self.target_pipes(pipes, pl, &p_ir.tables[t].name)? {
            let h = self.entry_handle(p, t, &p_ir.tables[t], &km, priority)?;
            self.pipes[p].rt.meters[m]
                .configure(h.0, cfg, now)
                .map_err(|error| ApiError::Meter {
                    name: p_ir.meters[m].name.clone(),
                    error,
                })?;
        }
        Ok(())
    }
}

impl Switch {
    /// The meter that `name` names: a meter (indexed or direct), or a table with a direct
    /// meter (BfRt sets a direct meter's attributes on its match table).
    fn meter_or_table(&self, name: &str) -> Result<(usize, usize), ApiError> {
        let by_meter = self.meter_ref(name);
        if by_meter.is_ok() {
            return by_meter;
        }
        let Ok(r) = self.table_ref(name) else {
            return by_meter;
        };
        let tid = ir::TableId(r.t as u32);
        self.prog.pipelines[r.pl]
            .meters
            .iter()
            .position(|m| m.direct_table == Some(tid))
            .map(|m| (r.pl, m))
            .ok_or_else(|| ApiError::Unknown {
                kind: "direct meter of table",
                name: self.prog.pipelines[r.pl].tables[r.t].name.clone(),
                suggestions: Vec::new(),
            })
    }

    /// Sets a meter's byte count adjustment on the selected pipes: `bytes` (-8192..=8191)
    /// added to every packet's length before a byte meter's update, replacing the
    /// program's `adjust_byte_count` (BfRt's `MeterByteCountAdjust` attribute). `name` is
    /// the meter, or the table of a direct meter.
    pub fn meter_byte_adjust_set(
        &mut self,
        pipes: PipeSel,
        name: &str,
        bytes: i32,
    ) -> Result<(), ApiError> {
        let (pl, m) = self.meter_or_table(name)?;
        let mname = self.prog.pipelines[pl].meters[m].name.clone();
        for p in self.target_pipes(pipes, pl, &mname)? {
            self.pipes[p].rt.meters[m]
                .set_byte_adjust(bytes)
                .map_err(|error| ApiError::Meter {
                    name: mname.clone(),
                    error,
                })?;
        }
        Ok(())
    }

    /// A meter's byte count adjustment on each selected pipe (`name` as for
    /// [`Switch::meter_byte_adjust_set`]).
    pub fn meter_byte_adjust(
        &self,
        pipes: PipeSel,
        name: &str,
    ) -> Result<Vec<(u16, i32)>, ApiError> {
        let (pl, m) = self.meter_or_table(name)?;
        let mname = &self.prog.pipelines[pl].meters[m].name;
        Ok(self
            .target_pipes(pipes, pl, mname)?
            .into_iter()
            .map(|p| (p as u16, self.pipes[p].rt.meters[m].byte_adjust()))
            .collect())
    }
}
