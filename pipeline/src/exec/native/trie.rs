//! LPM lookups done by generated code, for tables whose one key field is an LPM field of at
//! most 32 bits (IPv4 routes): the lookup `table::dir::DirIndex::lookup` does — the value
//! left-aligned to 32 bits, one to three slot reads down the 16-8-8 trie — on the trie's view
//! of its levels, then the hit's action record read from the table's dense action array
//! (`InlineLayout::hot`). An index without a trie (dropped for a handle past what its slots
//! encode) calls the apply shim; a table with no route misses.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};

use super::gen::{mem, Gen};
use crate::state::TableState;

impl Gen<'_, '_> {
    /// The trie lookup of `key` (a field of `width` ≤ 32 bits) in the LPM index of the table
    /// whose state is at `ts`: answers a hit taken in line; goes to `to.0` on a miss, to
    /// `to.1` (the shim) for anything else.
    pub(super) fn probe_trie(
        &mut self,
        ts: Value,
        key: Value,
        width: u16,
        (miss, shim): (Block, Block),
    ) -> Value {
        let l = self.inline.layout;
        let t = l.trie;
        let mt = std::mem::offset_of!(TableState, table);
        let kind = self
            .b
            .ins()
            .uload8(types::I64, mem(), ts, (mt + l.kind) as i32);
        let lpm = self.b.ins().icmp_imm(IntCC::Equal, kind, i64::from(l.lpm));
        self.next_if(lpm, shim);
        let dir = self
            .b
            .ins()
            .load(types::I64, mem(), ts, (mt + l.dir) as i32);
        self.next_if(dir, shim);
        let top = self.b.ins().load(types::I64, mem(), dir, t.top as i32);
        self.next_if(top, miss);
        let w = u32::from(width.clamp(1, 32));
        let v = self.fit(key, false);
        let v = self.b.ins().band_imm(v, ((1u64 << w) - 1) as i64);
        let a = self.b.ins().ishl_imm(v, i64::from(32 - w));
        let i = self.b.ins().ushr_imm(a, 16);
        let s0 = self.slot_at(top, i);
        let (l1, l2, found) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let s_found = self.b.append_block_param(found, types::I64);
        let child = self.b.ins().band_imm(s0, i64::from(t.child));
        self.b.ins().brif(child, l1, &[], found, &[s0.into()]);
        self.b.switch_to_block(l1);
        let j = self.b.ins().ushr_imm(a, 8);
        let s1 = self.chunk_slot(dir, 0, s0, j);
        let child = self.b.ins().band_imm(s1, i64::from(t.child));
        self.b.ins().brif(child, l2, &[], found, &[s1.into()]);
        self.b.switch_to_block(l2);
        let s2 = self.chunk_slot(dir, 1, s1, a);
        self.b.ins().jump(found, &[s2.into()]);
        self.b.switch_to_block(found);
        // Slot 0: no route; else the handle + 1.
        self.hit_by_handle(ts, s_found, (miss, shim))
    }

    /// Slot `j & 0xff` of the chunk of level `level + 1` that slot `parent` (a child slot)
    /// points at, in the trie at `dir`.
    fn chunk_slot(&mut self, dir: Value, level: usize, parent: Value, j: Value) -> Value {
        let t = self.inline.layout.trie;
        let chunks = self
            .b
            .ins()
            .load(types::I64, mem(), dir, t.chunks[level] as i32);
        let c = self.b.ins().band_imm(parent, i64::from(!t.child));
        let c = self.b.ins().imul_imm(c, t.chunk as i64);
        let j = self.b.ins().band_imm(j, 0xff);
        let i = self.b.ins().iadd(c, j);
        self.slot_at(chunks, i)
    }

    /// Slot `i` (a `u32`) of the level at `base`.
    fn slot_at(&mut self, base: Value, i: Value) -> Value {
        let off = self.b.ins().ishl_imm(i, 2);
        let at = self.b.ins().iadd(base, off);
        self.b.ins().uload32(mem(), at, 0)
    }
}
