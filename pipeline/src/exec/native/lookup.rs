//! Table lookups done by generated code, exact here and LPM in `super::trie`. For a table whose keys are all exact and pack
//! into 64 bits (the tables whose open-addressing map holds each entry's action record beside
//! its key, `MatchTable::lookup_inline`), untraced code packs the key with constant masks and
//! shifts, hashes it and probes the map's buckets itself, reading the map's address from the
//! table state the pass runs on. A hit whose data lies inline in its bucket is taken there:
//! its action id and data into the environment, its handle the running entry, the table's hit
//! count incremented. A miss (an empty bucket, or no buckets) whose default action's data is
//! inline (`TableState::HOT_DEFAULT`) is taken there too: the default's id and data, no
//! running entry, the miss counted (an LPM lookup ends the same two ways, and so does a TCAM
//! lookup of a ternary/range table whose key fits 128 bits: the key packed in line, the
//! tuple-space search by `env::shim_tcam`, which only answers the handle). Anything else —
//! data not inline, a table state of another kind, a table index out of range — calls the apply shim, which looks the table up again and does
//! what it always did. Traced code, and tables with an action profile or idle timeouts,
//! always call the shim.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};

use super::counter::CounterPlan;
use super::env::{EnvLayout, APPLY_HIT, TCAM_SHIM};
use super::gen::{mem, Gen};
use crate::exec::RunningEntry;
use crate::ir::{MatchKind, Pipeline};
use crate::state::TableState;
use crate::table::{inline_packing, tcam_packing, HotLayout, InlineLayout, INLINE_ARGS};

/// How generated code looks one table up itself.
pub enum Probe {
    /// The exact index's open-addressing map, the key packed by these masks and shifts.
    Exact(Vec<(u64, u32)>),
    /// The LPM index's trie (`super::trie`), for the one key field of this width (≤ 32).
    Trie(u16),
    /// The TCAM index's tuple-space search on the key packed in line by these masks and
    /// shifts into a `u128` (`table::tcam_packing`), through `env::shim_tcam`; the hit or
    /// miss then taken in line. `wide`: the packed key has more than 64 bits.
    Tcam {
        packing: Vec<(u128, u32)>,
        wide: bool,
    },
}

/// What generated code needs to look tables up itself: the tables' layout, and per table id
/// how it looks up those it may look up (`None`: always the shim); and per counter id how it
/// counts on those it may count on itself ([`super::counter`]).
pub struct InlineTables {
    pub(super) layout: InlineLayout,
    probes: Vec<Option<Probe>>,
    counters: Vec<Option<CounterPlan>>,
}

impl InlineTables {
    /// The tables of `pl` generated code looks up itself.
    pub fn new(pl: &Pipeline) -> InlineTables {
        let probes = pl
            .tables
            .iter()
            .enumerate()
            .map(|(tid, t)| {
                if crate::state::profile_of(pl, tid).is_some() || t.idle_timeout {
                    return None;
                }
                let shape = crate::state::table_shape(t);
                match shape[..] {
                    [(MatchKind::Lpm, w)] if w <= 32 => Some(Probe::Trie(w)),
                    _ => inline_packing(&shape).map(Probe::Exact).or_else(|| {
                        let packing = tcam_packing(&shape)?;
                        let bits: u32 = shape.iter().map(|k| u32::from(k.1.min(128))).sum();
                        Some(Probe::Tcam {
                            packing,
                            wide: bits > 64,
                        })
                    }),
                }
            })
            .collect();
        InlineTables {
            layout: InlineLayout::get(),
            probes,
            counters: super::counter::plans(pl),
        }
    }

    /// How generated code counts on counter `counter` itself (`None`: through the shim).
    pub fn counter(&self, counter: u32) -> Option<CounterPlan> {
        self.counters.get(counter as usize).copied().flatten()
    }

    /// How a lookup of table `table` with `nkeys` key values may be done in generated code.
    pub fn probe(&self, table: u32, nkeys: usize) -> Option<&Probe> {
        let p = self.probes.get(table as usize)?.as_ref()?;
        let n = match p {
            Probe::Exact(packing) => packing.len(),
            Probe::Trie(_) => 1,
            Probe::Tcam { packing, .. } => packing.len(),
        };
        (n == nkeys).then_some(p)
    }
}

impl Gen<'_, '_> {
    /// Looks table `table` up with the key values `keys` as `probe` says: in line for an
    /// inline hit or miss, else by the apply shim (the keys stored in `Env::key` for it only
    /// on that way: an inline lookup reads them from registers).
    /// Answers what the shim answers (action id and `APPLY_*` flags).
    pub fn inline_lookup(&mut self, table: u32, keys: &[Value], probe: &Probe) -> Value {
        let (shim, miss, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let r = self.b.append_block_param(done, types::I64);
        // The table's state, if the pass has that many tables.
        let ntables = self.env_load(std::mem::offset_of!(EnvLayout, ntables));
        let there = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, ntables, i64::from(table));
        self.next_if(there, shim);
        let tables = self.env_load(std::mem::offset_of!(EnvLayout, tables));
        let at = table as usize * std::mem::size_of::<TableState>();
        let ts = self.b.ins().iadd_imm(tables, at as i64);
        let answer = match probe {
            Probe::Exact(packing) => self.probe_open(ts, keys, packing, (miss, shim)),
            Probe::Trie(width) => self.probe_trie(ts, keys[0], *width, (miss, shim)),
            Probe::Tcam { packing, wide } => {
                self.probe_tcam(ts, keys, packing, *wide, (miss, shim))
            }
        };
        self.b.ins().jump(done, &[answer.into()]);
        self.b.switch_to_block(miss);
        let d = TableState::HOT_DEFAULT as i32;
        let len = self
            .b
            .ins()
            .uload32(mem(), ts, d + HotLayout::get().len as i32);
        let inline = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThanOrEqual, len, INLINE_ARGS as i64);
        self.next_if(inline, shim);
        let answer = self.take_miss(ts, len);
        self.b.ins().jump(done, &[answer.into()]);
        self.b.switch_to_block(shim);
        self.store_keys(keys);
        let env = self.env;
        let t = self.b.ins().iconst(types::I32, i64::from(table));
        let n = self.b.ins().iconst(types::I32, keys.len() as i64);
        let (sig, f) = (self.sigs.apply, self.shims.apply);
        let answer = self.call_shim(sig, f, &[env, t, n]).expect("answer");
        self.b.ins().jump(done, &[answer.into()]);
        self.b.switch_to_block(done);
        r
    }

    /// The probe of the exact map of the table whose state is at `ts`, the key `keys` packed
    /// by `packing`: answers a hit taken in line; goes to `to.0` on a miss, to `to.1` (the
    /// shim) for anything else.
    fn probe_open(
        &mut self,
        ts: Value,
        keys: &[Value],
        packing: &[(u64, u32)],
        (miss, shim): (Block, Block),
    ) -> Value {
        let l = self.inline.layout;
        let mut packed = self.iconst(0);
        for (v, (mask, shift)) in keys.iter().zip(packing) {
            let v = self.fit(*v, false);
            let v = self.b.ins().band_imm(v, *mask as i64);
            let v = self.b.ins().ishl_imm(v, i64::from(*shift));
            packed = self.b.ins().bor(packed, v);
        }
        let mt = std::mem::offset_of!(TableState, table);
        // An exact index with buckets (none: every lookup misses).
        let kind = self
            .b
            .ins()
            .uload8(types::I64, mem(), ts, (mt + l.kind) as i32);
        let exact = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, kind, i64::from(l.exact));
        self.next_if(exact, shim);
        let map = mt + l.map;
        let buckets = self
            .b
            .ins()
            .load(types::I64, mem(), ts, (map + l.open.buckets) as i32);
        self.next_if(buckets, miss);
        let mask = self
            .b
            .ins()
            .load(types::I64, mem(), ts, (map + l.open.mask) as i32);
        let shift = self
            .b
            .ins()
            .load(types::I64, mem(), ts, (map + l.open.shift) as i32);
        let h = self.b.ins().imul_imm(packed, l.hash_mul as i64);
        let home = self.b.ins().ushr(h, shift);
        // The probe: stop at the key (a hit) or at an empty bucket (a miss).
        let (probe, cmp, next, hit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let i = self.b.append_block_param(probe, types::I64);
        self.b.ins().jump(probe, &[home.into()]);
        self.b.switch_to_block(probe);
        let off = self.b.ins().imul_imm(i, l.open.bucket as i64);
        let b = self.b.ins().iadd(buckets, off);
        let slot = self.b.ins().uload32(mem(), b, l.open.slot as i32);
        self.b.ins().brif(slot, cmp, &[], miss, &[]);
        self.b.switch_to_block(cmp);
        let k = self.b.ins().load(types::I64, mem(), b, l.open.key as i32);
        let same = self.b.ins().icmp(IntCC::Equal, k, packed);
        self.b.ins().brif(same, hit, &[], next, &[]);
        self.b.switch_to_block(next);
        let i1 = self.b.ins().iadd_imm(i, 1);
        let i1 = self.b.ins().band(i1, mask);
        self.b.ins().jump(probe, &[i1.into()]);
        self.b.switch_to_block(hit);
        let h = self.b.ins().iadd_imm(slot, -1);
        let rec = self.b.ins().iadd_imm(b, l.open.hot as i64);
        self.take_hit(ts, rec, h, shim)
    }

    /// The TCAM search of the table whose state is at `ts`, the key `keys` packed by
    /// `packing` (in an `i128` when `wide`), by `env::shim_tcam`: answers a hit taken in line
    /// from the table's dense action array; goes to `to.0` on a miss, to `to.1` (the apply
    /// shim) when the index cannot search a packed key.
    fn probe_tcam(
        &mut self,
        ts: Value,
        keys: &[Value],
        packing: &[(u128, u32)],
        wide: bool,
        (miss, shim): (Block, Block),
    ) -> Value {
        let mut packed = self.konst(0, wide);
        for (v, (mask, shift)) in keys.iter().zip(packing) {
            let v = self.fit(*v, wide);
            let m = self.konst(*mask, wide);
            let v = self.b.ins().band(v, m);
            let v = self.b.ins().ishl_imm(v, i64::from(*shift));
            packed = self.b.ins().bor(packed, v);
        }
        let (lo, hi) = if wide {
            self.b.ins().isplit(packed)
        } else {
            (packed, self.iconst(0))
        };
        let (sig, f) = (self.sigs.tcam, self.shims.tcam);
        let r = self.call_shim(sig, f, &[ts, lo, hi]).expect("answer");
        let not_shim = self.b.ins().icmp_imm(IntCC::NotEqual, r, TCAM_SHIM as i64);
        self.next_if(not_shim, shim);
        self.hit_by_handle(ts, r, (miss, shim))
    }

    /// A search's answer `found` (0: no entry, else the entry's handle + 1): to `miss`, or the
    /// entry's record in the table's hot array taken as the hit.
    pub(super) fn hit_by_handle(
        &mut self,
        ts: Value,
        found: Value,
        (miss, shim): (Block, Block),
    ) -> Value {
        self.next_if(found, miss);
        let h = self.b.ins().iadd_imm(found, -1);
        let l = self.inline.layout;
        let mt = std::mem::offset_of!(TableState, table);
        let hot = self
            .b
            .ins()
            .load(types::I64, mem(), ts, (mt + l.hot) as i32);
        let off = self.b.ins().imul_imm(h, l.hot_size as i64);
        let rec = self.b.ins().iadd(hot, off);
        self.take_hit(ts, rec, h, shim)
    }

    /// Goes on in a new block when `cond` is non-zero, else to `other`.
    pub(super) fn next_if(&mut self, cond: Value, other: cranelift_codegen::ir::Block) {
        let go = self.b.create_block();
        self.b.ins().brif(cond, go, &[], other, &[]);
        self.b.switch_to_block(go);
    }

    /// A hit with handle `h` whose action record ([`HotLayout`]) is at `rec`, of the table
    /// whose state is at `ts`, as the shim's `apply_inline` takes it (to `shim` when the data
    /// is not inline): the values into `Env::args`, the handle the running entry, the hit
    /// counted. Answers the action id with `APPLY_HIT`.
    pub(super) fn take_hit(&mut self, ts: Value, rec: Value, h: Value, shim: Block) -> Value {
        let l = HotLayout::get();
        let len = self.b.ins().uload32(mem(), rec, l.len as i32);
        let inline = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThanOrEqual, len, INLINE_ARGS as i64);
        self.next_if(inline, shim);
        let hits = std::mem::offset_of!(TableState, hits);
        self.take(ts, (rec, l.args), h, len, hits);
        let action = self.b.ins().uload32(mem(), rec, l.action as i32);
        self.b.ins().bor_imm(action, APPLY_HIT as i64)
    }

    /// A miss of the table whose state is at `ts`, its default action's data inline (`len` ≤
    /// `INLINE_ARGS` values), as the shim's `apply_inline` takes it: the default's values into
    /// `Env::args`, no running entry, the miss counted. Answers the default's action id.
    fn take_miss(&mut self, ts: Value, len: Value) -> Value {
        let (d, h) = (TableState::HOT_DEFAULT, HotLayout::get());
        let none = self.iconst(RunningEntry::NONE.raw());
        let misses = std::mem::offset_of!(TableState, misses);
        self.take(ts, (ts, d + h.args), none, len, misses);
        self.b.ins().uload32(mem(), ts, (d + h.action) as i32)
    }

    /// What a hit and a miss taken in line share: the `INLINE_ARGS` values at `data` (address,
    /// offset) into `Env::args` (those past `len` are never read), `Env::nargs` = `len`, the
    /// running entry saved and replaced by `entry`, the table's count at `counter` (an offset
    /// in its state `ts`) incremented.
    fn take(&mut self, ts: Value, data: (Value, usize), entry: Value, len: Value, counter: usize) {
        let args = std::mem::offset_of!(EnvLayout, args);
        for k in 0..INLINE_ARGS {
            let v = self
                .b
                .ins()
                .load(types::I64, mem(), data.0, (data.1 + 8 * k) as i32);
            let env = self.env;
            self.store_value(env, (args + 16 * k) as i32, v);
        }
        // (`uload32` zero-extends to 64 bits.)
        self.env_store(std::mem::offset_of!(EnvLayout, nargs), len);
        let ctx = self.env_load(std::mem::offset_of!(EnvLayout, ctx));
        let off = self.shims.entry_off;
        let saved = self.b.ins().load(types::I64, mem(), ctx, off);
        self.env_store(std::mem::offset_of!(EnvLayout, saved_entry), saved);
        self.b.ins().store(mem(), entry, ctx, off);
        let count = self.b.ins().load(types::I64, mem(), ts, counter as i32);
        let count = self.b.ins().iadd_imm(count, 1);
        self.b.ins().store(mem(), count, ts, counter as i32);
    }
}
