//! Counter updates done by generated code: `count()` on a direct counter adds to the running
//! entry's cell (on a miss the default entry's, as `Ctx::count`), `count(i)` on an indexed counter adds to
//! cell `i` when `i` is below the counter's size, both reading the counter array's addresses
//! from its view (`CounterState::VIEW`) in the pipe state the pass runs on, and the packet's
//! length from the context. Anything else — an index at or past the size (which wraps and is
//! counted as a wrap), an index over 64 bits, a counter with true egress accounting (counted
//! after the egress deparser), a counter the state lacks — and all of traced code goes
//! through the count shim, which does what the flat engine does.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};

use super::env::{self, EnvLayout};
use super::gen::{mem, Gen};
use crate::ir::{CounterKind, Pipeline};
use crate::state::{CounterState, CounterView};

/// How generated code counts on one counter.
#[derive(Debug, Clone, Copy)]
pub struct CounterPlan {
    direct: bool,
    size: u32,
    adjust: u16,
    packets: bool,
    bytes: bool,
    /// A direct counter's default-entry cell, which a miss counts (`None`: its table is not
    /// in the pipeline; the shim counts).
    miss_cell: Option<u32>,
}

/// Per counter id of `pl`, its plan when generated code may count on it itself.
pub fn plans(pl: &Pipeline) -> Vec<Option<CounterPlan>> {
    pl.counters
        .iter()
        .map(|c| {
            (!c.bytes.true_egress).then_some(CounterPlan {
                direct: c.direct_table.is_some(),
                size: c.size,
                adjust: c.bytes.adjust,
                packets: c.kind != CounterKind::Bytes,
                bytes: c.kind != CounterKind::Packets,
                miss_cell: c
                    .direct_table
                    .and_then(|t| pl.tables.get(t.index()))
                    .and_then(|t| u32::try_from(crate::state::default_entry_cell(t)).ok()),
            })
        })
        .collect()
}

impl Gen<'_, '_> {
    /// A counter update with the index value `index` (`None`: `count()`), in line where
    /// [`CounterPlan`] allows, else through [`env::shim_count`].
    pub fn count_value(&mut self, counter: u32, index: Option<Value>) {
        let plan = self.inline.counter(counter);
        let wide = index.is_some_and(|v| self.ty(v) == types::I128);
        match plan {
            Some(p) if !self.traced() && !wide && p.direct == index.is_none() => {
                self.inline_count(counter, p, index)
            }
            _ => self.count_shim(counter, index),
        }
    }

    /// The update through [`env::shim_count`].
    fn count_shim(&mut self, counter: u32, index: Option<Value>) {
        let (has, lo, hi) = match index {
            Some(v) => {
                let v = self.fit(v, true);
                let (lo, hi) = self.b.ins().isplit(v);
                (1, lo, hi)
            }
            None => {
                let z = self.iconst(0);
                (0, z, z)
            }
        };
        let c = self.b.ins().iconst(types::I32, i64::from(counter));
        let has = self.b.ins().iconst(types::I32, has);
        let (env, sig) = (self.env, self.sigs.count);
        let f = self.shims.count;
        let code = self
            .call_shim(sig, f, &[env, c, has, lo, hi])
            .expect("status");
        self.check_status(code, env::NEXT);
    }

    /// The update in line: the cell (the running entry's, or `index` below the size), its
    /// packet count plus one and byte count plus the packet's counted length (a miss: the
    /// default entry's cell); the shim for an index that wraps or a counter the pass's state
    /// lacks.
    fn inline_count(&mut self, counter: u32, p: CounterPlan, index: Option<Value>) {
        let (slow, done) = (self.b.create_block(), self.b.create_block());
        let n = self.env_load(std::mem::offset_of!(EnvLayout, ncounters));
        let there = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, n, i64::from(counter));
        self.next_if(there, slow);
        let idx = match index {
            None => {
                let ctx = self.env_load(std::mem::offset_of!(EnvLayout, ctx));
                let off = self.shims.entry_off;
                let e = self.b.ins().load(types::I64, mem(), ctx, off);
                // A running entry is a handle (below 2^32); anything else is a miss, which
                // counts the default entry's cell (`state::default_entry_cell`).
                let live =
                    self.b
                        .ins()
                        .icmp_imm(IntCC::UnsignedLessThanOrEqual, e, i64::from(u32::MAX));
                match p.miss_cell {
                    Some(cell) => {
                        let cell = self.iconst(u64::from(cell));
                        self.b.ins().select(live, e, cell)
                    }
                    None => {
                        self.next_if(live, slow);
                        e
                    }
                }
            }
            Some(v) => {
                let v = self.fit(v, false);
                let below = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedLessThan, v, i64::from(p.size));
                self.next_if(below, slow);
                v
            }
        };
        let base = self.env_load(std::mem::offset_of!(EnvLayout, counters));
        let at = counter as usize * std::mem::size_of::<CounterState>() + CounterState::VIEW;
        let view = self.b.ins().iadd_imm(base, at as i64);
        if p.packets {
            let one = self.iconst(1);
            let fields = (
                std::mem::offset_of!(CounterView, packets),
                std::mem::offset_of!(CounterView, npackets),
            );
            self.add_cell(view, fields, idx, one);
        }
        if p.bytes {
            let ctx = self.env_load(std::mem::offset_of!(EnvLayout, ctx));
            let len = self.b.ins().uload32(mem(), ctx, self.shims.pkt_len_off);
            let len = self.counted(len, p.adjust);
            let fields = (
                std::mem::offset_of!(CounterView, bytes),
                std::mem::offset_of!(CounterView, nbytes),
            );
            self.add_cell(view, fields, idx, len);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        self.count_shim(counter, index);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// `len` less `adjust`, 0 below it (`ByteAccounting::counted`).
    fn counted(&mut self, len: Value, adjust: u16) -> Value {
        if adjust == 0 {
            return len;
        }
        let less = self.b.ins().iadd_imm(len, -i64::from(adjust));
        let above = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, len, i64::from(adjust));
        let zero = self.iconst(0);
        self.b.ins().select(above, less, zero)
    }

    /// Adds `v` to cell `idx` of the counts whose address and length lie at `fields` in the
    /// view at `view`, when `idx` is below that length.
    fn add_cell(&mut self, view: Value, fields: (usize, usize), idx: Value, v: Value) {
        let (add, after) = (self.b.create_block(), self.b.create_block());
        let len = self.b.ins().load(types::I64, mem(), view, fields.1 as i32);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, idx, len);
        self.b.ins().brif(inside, add, &[], after, &[]);
        self.b.switch_to_block(add);
        let cells = self.b.ins().load(types::I64, mem(), view, fields.0 as i32);
        let off = self.b.ins().ishl_imm(idx, 3);
        let cell = self.b.ins().iadd(cells, off);
        let x = self.b.ins().load(types::I64, mem(), cell, 0);
        let x = self.b.ins().iadd(x, v);
        self.b.ins().store(mem(), x, cell, 0);
        self.b.ins().jump(after, &[]);
        self.b.switch_to_block(after);
    }
}
