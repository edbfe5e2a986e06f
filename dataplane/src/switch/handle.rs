//! The control handle of a running switch in either threading mode ([`SwitchHandle`]) and one
//! switch instance with the pipes it answers for ([`Part`]).

use std::time::Duration;

use pipeline::api::cells::Cell;
use pipeline::api::{CounterValue, PipeSel, RegisterValue};
use pipeline::externs::meter::MeterConfig;
use pipeline::switch::Switch;

use super::{PipeSwitch, SwitchPipeline};
use crate::runtime::{PipeHandle, RuntimeError, RuntimeHandle, RuntimeStats};
use crate::LinkControl;

/// Every pipe (a mask for [`Part::owns`]).
pub const ALL_PIPES: u8 = 0xf;

/// The handle `pisa ctl` requests and metrics go through, in either threading mode.
#[derive(Clone)]
pub enum SwitchHandle {
    /// One pipeline thread owns the whole switch.
    Single(RuntimeHandle<SwitchPipeline>),
    /// One thread per pipe, each with its own instance.
    Pipes(PipeHandle<PipeSwitch>),
}

impl SwitchHandle {
    /// Port, thread and runtime counters.
    pub fn stats(&self) -> RuntimeStats {
        match self {
            SwitchHandle::Single(h) => h.stats(),
            SwitchHandle::Pipes(h) => h.stats(),
        }
    }

    /// The device ports attached.
    pub fn devports(&self) -> Vec<u16> {
        match self {
            SwitchHandle::Single(h) => h.devports(),
            SwitchHandle::Pipes(h) => h.devports(),
        }
    }

    /// Now on the switch's clock: what its entries' last hits are measured on.
    pub fn now(&self) -> crate::Nanos {
        match self {
            SwitchHandle::Single(h) => h.now(),
            SwitchHandle::Pipes(h) => h.now(),
        }
    }

    /// The link control of a device port.
    pub fn link(&self, devport: u16) -> Result<LinkControl, RuntimeError> {
        match self {
            SwitchHandle::Single(h) => h.link(devport),
            SwitchHandle::Pipes(h) => h.link(devport),
        }
    }

    /// Runs `f` on every switch instance (on its thread, between batches) with the pipes it
    /// owns; results in thread order. A write must go through here so every instance gets it;
    /// a read keeps, from each instance, only what its owned pipes say ([`Part`]).
    pub fn each<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl Fn(&mut Switch, u8) -> R + Send + Sync + 'static,
    ) -> Result<Vec<R>, RuntimeError> {
        match self {
            SwitchHandle::Single(h) => h.call(timeout, move |p: &mut SwitchPipeline| {
                vec![f(&mut p.sw, ALL_PIPES)]
            }),
            SwitchHandle::Pipes(h) => Ok(h
                .call_each(timeout, move |p: &mut PipeSwitch| f(&mut p.sw, p.owns))?
                .into_iter()
                .map(|(_, r)| r)
                .collect()),
        }
    }

    /// Runs the write `f` on every instance; its answer, or the first error. Instances are
    /// identical, so they accept or refuse a write alike.
    pub fn write<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl Fn(&mut Switch) -> Result<R, String> + Send + Sync + 'static,
    ) -> Result<R, String> {
        let rs = self
            .each(timeout, move |sw, _| f(sw))
            .map_err(|e| e.to_string())?;
        let mut first = None;
        for r in rs {
            match r {
                Err(e) => return Err(e),
                Ok(v) => {
                    first.get_or_insert(v);
                }
            }
        }
        first.ok_or_else(|| RuntimeError::Stopped.to_string())
    }
}

/// One switch instance and the pipes whose state it answers for: the whole switch in
/// single-thread mode, one pipe (plus pipes without a thread) per pipe thread otherwise.
/// Whether the pipe bit mask `owns` (bit p: pipe p; at most 8 pipes) holds `pipe`; false for
/// any pipe past the mask, whatever a request named.
pub fn owns_pipe(owns: u8, pipe: u32) -> bool {
    pipe < 8 && owns & (1 << pipe) != 0
}

#[derive(Clone, Copy)]
pub struct Part<'a> {
    pub sw: &'a Switch,
    pub owns: u8,
}

impl Part<'_> {
    /// Whether this part answers for `pipe`.
    pub fn owns(&self, pipe: u16) -> bool {
        owns_pipe(self.owns, pipe.into())
    }

    /// A request for one pipe that another part answers (a pipe the switch lacks is asked
    /// anyway, so the API names the error).
    fn not_mine(&self, sel: PipeSel) -> bool {
        matches!(sel, PipeSel::Pipe(p) if !self.owns(p) && p < self.sw.num_pipes())
    }

    /// Counter cells of the pipes it owns (`sel` as in the API).
    pub fn counter_read(
        &self,
        sel: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<CounterValue>, String> {
        if self.not_mine(sel) {
            return Ok(Vec::new());
        }
        let cells = self
            .sw
            .counter_read(sel, name, index)
            .map_err(|e| format!("counter `{name}`[{index}]: {e}"))?;
        Ok(cells.into_iter().filter(|c| self.owns(c.pipe)).collect())
    }

    /// Register cells of the pipes it owns.
    pub fn register_read(
        &self,
        sel: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<RegisterValue>, String> {
        if self.not_mine(sel) {
            return Ok(Vec::new());
        }
        let cells = self
            .sw
            .register_read(sel, name, index)
            .map_err(|e| format!("register `{name}`[{index}]: {e}"))?;
        Ok(cells.into_iter().filter(|c| self.owns(c.pipe)).collect())
    }

    /// A meter's byte count adjustment on the pipes it owns, and with `index` that cell's
    /// rates (`None`: unconfigured). `name` is a meter, or a direct meter's table.
    pub fn meter_read(
        &self,
        sel: PipeSel,
        name: &str,
        index: Option<u32>,
    ) -> Result<Vec<MeterCell>, String> {
        if self.not_mine(sel) {
            return Ok(Vec::new());
        }
        let what = match index {
            Some(i) => format!("meter `{name}`[{i}]"),
            None => format!("meter `{name}`"),
        };
        let adjust = self
            .sw
            .meter_byte_adjust(sel, name)
            .map_err(|e| format!("{what}: {e}"))?;
        let configs = match index {
            Some(index) => self
                .sw
                .meter_config(sel, Cell::Index { name, index })
                .map_err(|e| format!("{what}: {e}"))?,
            None => Vec::new(),
        };
        Ok(adjust
            .into_iter()
            .filter(|&(pipe, _)| self.owns(pipe))
            .map(|(pipe, byte_count_adjust)| MeterCell {
                pipe,
                byte_count_adjust,
                config: configs.iter().find(|c| c.0 == pipe).and_then(|c| c.1),
            })
            .collect())
    }

    /// Hits and misses of a table on the pipes it owns (pipes not running the table's
    /// pipeline count nothing).
    pub fn table_hit_miss(&self, table: &str) -> Result<(u64, u64), String> {
        if self.owns == ALL_PIPES {
            return self
                .sw
                .table_hit_miss(PipeSel::All, table)
                .map_err(|e| e.to_string());
        }
        // A bad name is an error; a pipe running another pipeline is not.
        self.sw
            .table_hit_miss(PipeSel::All, table)
            .map_err(|e| e.to_string())?;
        let mut sum = (0, 0);
        for p in 0..self.sw.num_pipes() {
            if self.owns(p) {
                if let Ok((h, m)) = self.sw.table_hit_miss(PipeSel::Pipe(p), table) {
                    sum.0 += h;
                    sum.1 += m;
                }
            }
        }
        Ok(sum)
    }
}

/// What `Part::meter_read` reads on one pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterCell {
    pub pipe: u16,
    pub byte_count_adjust: i32,
    /// The cell's rates, when a cell was asked for and is configured.
    pub config: Option<MeterConfig>,
}

/// Counter cells merged over parts, by pipe.
pub fn merge_cells<T>(
    parts: Vec<Result<Vec<T>, String>>,
    pipe: impl Fn(&T) -> u16,
) -> Result<Vec<T>, String> {
    let mut all = Vec::new();
    for p in parts {
        all.extend(p?);
    }
    all.sort_by_key(|c| pipe(c));
    Ok(all)
}

/// The pipes each pipe thread owns: its own, and the first thread also every pipe without a
/// thread (their state only changes by control writes, which every instance gets).
pub fn ownership(thread_pipes: &[u16]) -> Vec<(u16, u8)> {
    let with_thread: u8 = thread_pipes.iter().fold(0, |m, p| m | 1 << p);
    thread_pipes
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let extra = if i == 0 { ALL_PIPES & !with_thread } else { 0 };
            (p, 1 << p | extra)
        })
        .collect()
}
