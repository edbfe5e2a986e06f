//! Statements: field writes, validity, ifs, table applies (lookup through the existing table
//! code, then a direct call of the matched action's generated function), action calls,
//! emits, extracts (of stack elements too), header copies, digests and mirror requests
//! ([`super::externs`]). Ops not generated (register actions, resubmit requests, stack
//! shifts) run through the flat engine ([`super::env::shim_op`]); each is recorded
//! ([`super::op_label`]).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::Switch;

use super::env::{self, EnvLayout, APPLY_FAULT, APPLY_HIT, APPLY_RAN, MAX_ARGS, MAX_KEYS, RETURN};
use super::gen::{mem, Gen};
use crate::exec::flat::{CsPart, FApply, FBranches, FExpr, Op};
use crate::exec::RunningEntry;
use crate::ir::FieldRef;

// Generated code restores `Ctx::entry` (at `Shims::entry_off`) by copying these 8 bytes from
// `Env::saved_entry`, and sets it to a hit's handle (a `u64`).
const _: () = assert!(std::mem::size_of::<RunningEntry>() == 8);

impl Gen<'_, '_> {
    /// Generates a block of ops; control continues after it in the current block.
    pub fn block(&mut self, ops: &[Op]) {
        for op in ops {
            self.op(op);
        }
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::SetConst { f, value, watch } if self.field_ok(*f) => {
                let v = self.konst(*value, f.width > 64);
                self.write_field(*f, v);
                self.mark_written(*watch);
                self.trace_write(*f, v);
            }
            Op::SetParam {
                f,
                index,
                mask,
                watch,
            } if self.field_ok(*f) => {
                let e = FExpr::Param {
                    index: *index,
                    mask: *mask,
                };
                let v = self.expr(&e);
                self.write_field(*f, v);
                self.mark_written(*watch);
                self.trace_write(*f, v);
            }
            Op::Set { f, e, watch } if self.field_ok(*f) => {
                let v = self.expr(e);
                self.write_field(*f, v);
                self.mark_written(*watch);
                self.trace_write(*f, v);
            }
            Op::SetSlice {
                f,
                e,
                lo,
                mask,
                watch,
            } if self.field_ok(*f) => {
                let m = mask << lo;
                let w = f.width > 64;
                let v = self.expr(e);
                let v = self.fit(v, w);
                let v = self.b.ins().ishl_imm(v, i64::from(*lo));
                let v = self.mask(v, m);
                let old = self.read_field(*f);
                let old = self.mask(old, !m & crate::phv::mask(f.width));
                let old = self.fit(old, w);
                let v = self.fit(v, w);
                let new = self.b.ins().bor(old, v);
                self.write_field(*f, new);
                self.mark_written(*watch);
            }
            Op::SetValid { header, valid } => self.set_valid(*header, *valid),
            Op::CopyHeader {
                dst,
                src,
                dst_off,
                src_off,
                len,
            } if self.copy_ok(*dst_off, *src_off, *len) => {
                let phv = self.phv;
                self.copy_bytes((phv, *src_off), (phv, *dst_off), *len);
                let v = self.is_valid(*src);
                self.set_valid_to(*dst, v);
            }
            Op::If {
                cond,
                then,
                els,
                gate,
            } => {
                let c = self.expr(cond);
                let c = self.nonzero(c);
                if self.traced() {
                    let r = self.b.ins().uextend(types::I32, c);
                    self.hook(|h| h.gate, *gate, Some(r));
                }
                let (tb, eb, done) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().brif(c, tb, &[], eb, &[]);
                for (block, ops) in [(tb, then), (eb, els)] {
                    self.b.switch_to_block(block);
                    self.block(ops);
                    self.b.ins().jump(done, &[]);
                }
                self.b.switch_to_block(done);
            }
            Op::Apply(a) if a.keys.len() <= MAX_KEYS => self.apply(a),
            Op::Call { action, args } if args.len() <= MAX_ARGS => self.call(action.0, args),
            Op::Exit | Op::Return => {
                let code = if matches!(op, Op::Exit) {
                    self.hook(|h| h.exit, 0, None);
                    env::EXIT
                } else {
                    RETURN
                };
                let c = self.b.ins().iconst(types::I32, i64::from(code));
                self.leave(c);
                self.fresh();
            }
            Op::Emit {
                header,
                offset,
                len,
            } => self.emit(&[(*header, *offset, *len)], *offset, *len),
            Op::EmitRun { parts, offset, len } => self.emit(parts, *offset, *len),
            Op::Extract {
                header,
                offset,
                len,
            } if self.too_short.is_some() && offset + len <= self.layout.phv_len => {
                self.extract(op, *header, *offset, *len)
            }
            Op::ExtractNext {
                next_index,
                elements,
            } if self.too_short.is_some()
                && next_index.width <= 64
                && self.field_ok(*next_index)
                && elements.iter().all(|e| {
                    matches!(e, Op::Extract { offset, len, .. }
                        if offset + len <= self.layout.phv_len)
                }) =>
            {
                self.extract_next(*next_index, elements)
            }
            Op::AdvanceConst(bits) if self.too_short.is_some() && *bits < 1 << 62 => {
                self.advance(*bits)
            }
            Op::ChecksumAdd {
                checksum,
                parts,
                subtract,
            } if self.csum_runs_ok(parts) => self.checksum_add(*checksum, parts, *subtract),
            Op::Count { counter, index } => self.count(*counter, Some(index)),
            Op::CountDirect { counter } => self.count(*counter, None),
            Op::Digest { fields, .. } => self.digest(op, fields),
            Op::Mirror { session, header } => self.mirror(op, session, header),
            _ => {
                self.fallbacks.push(super::op_label(op));
                self.shim_op(op)
            }
        }
    }

    /// Whether a parser checksum input is runs of whole 16-bit words inside the PHV (what
    /// [`Self::checksum_add`] generates: with nothing pending between them, the sum is that
    /// of all their words; other inputs run the flat engine).
    pub(super) fn csum_runs_ok(&self, parts: &[CsPart]) -> bool {
        !parts.is_empty()
            && parts.iter().all(|p| match p {
                CsPart::Run { start, width } => {
                    start % 8 == 0
                        && width % 16 == 0
                        && start / 8 + width / 8 <= self.layout.phv_len
                }
                _ => false,
            })
    }

    /// `checksum.add` / `subtract` of PHV runs (see [`Self::csum_runs_ok`]): the big-endian
    /// 16-bit words summed and folded, complemented for a subtract, then added into the
    /// accumulator (when it exists).
    fn checksum_add(&mut self, c: u32, parts: &[CsPart], subtract: bool) {
        let total = self.sum_runs(parts);
        let mut sum = self.fold16(total);
        if subtract {
            let n = self.b.ins().bnot(sum);
            sum = self.b.ins().band_imm(n, 0xffff);
        }
        let (yes, done) = (self.b.create_block(), self.b.create_block());
        let len_v = self.env_load(std::mem::offset_of!(EnvLayout, csum_len));
        let inside = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, len_v, i64::from(c));
        self.b.ins().brif(inside, yes, &[], done, &[]);
        self.b.switch_to_block(yes);
        let base = self.env_load(std::mem::offset_of!(EnvLayout, csum));
        let acc = self.b.ins().load(types::I32, mem(), base, (c * 4) as i32);
        let acc = self.b.ins().uextend(types::I64, acc);
        let s = self.b.ins().iadd(acc, sum);
        let s = self.fold16(s);
        let s = self.b.ins().ireduce(types::I32, s);
        self.b.ins().store(mem(), s, base, (c * 4) as i32);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// The unfolded sum (an `i64`) of the big-endian 16-bit words of PHV runs that
    /// [`Self::csum_runs_ok`] admits.
    pub(super) fn sum_runs(&mut self, parts: &[CsPart]) -> Value {
        let mut total = self.iconst(0);
        for p in parts {
            let CsPart::Run { start, width } = *p else {
                continue;
            };
            for k in (0..width / 8).step_by(2) {
                let at = (start / 8 + k) as i32;
                let w = self.b.ins().load(types::I16, mem(), self.phv, at);
                let w = self.b.ins().bswap(w);
                let w = self.b.ins().uextend(types::I64, w);
                total = self.b.ins().iadd(total, w);
            }
        }
        total
    }

    /// A counter update: the index generated, the count in line or through the shim
    /// ([`super::counter`]).
    fn count(&mut self, counter: u32, index: Option<&FExpr>) {
        let v = index.map(|e| self.expr(e));
        self.count_value(counter, v);
    }

    /// `extract(stack.next)`: the element `next_index` names extracted (as an `extract`),
    /// then `next_index` + 1; past the last element the parse ends as with `reject`
    /// ([`crate::exec::parser::STACK_FULL`]).
    fn extract_next(&mut self, next_index: FieldRef, elements: &[Op]) {
        let ni = self.read_field(next_index);
        let ni = self.fit(ni, false);
        let done = self.b.create_block();
        for (i, e) in elements.iter().enumerate() {
            let Op::Extract {
                header,
                offset,
                len,
            } = e
            else {
                continue;
            };
            let (yes, no) = (self.b.create_block(), self.b.create_block());
            let is = self.b.ins().icmp_imm(IntCC::Equal, ni, i as i64);
            self.b.ins().brif(is, yes, &[], no, &[]);
            self.b.switch_to_block(yes);
            self.extract(e, *header, *offset, *len);
            let next = self.iconst(i as u64 + 1);
            self.write_field(next_index, next);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(no);
        }
        self.parse_reject();
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// `advance(bits)` by a constant: the cursor moves, or the packet is too short.
    fn advance(&mut self, bits: u64) {
        let cur_off = std::mem::offset_of!(EnvLayout, cursor);
        let cur = self.env_load(cur_off);
        let end = self.b.ins().iadd_imm(cur, bits as i64);
        let limit = self.env_load(std::mem::offset_of!(EnvLayout, input_bits));
        let short = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, limit);
        let fits = self.b.create_block();
        let too_short = self.too_short.expect("parser");
        self.b.ins().brif(short, too_short, &[], fits, &[]);
        self.b.switch_to_block(fits);
        self.env_store(cur_off, end);
    }

    /// Whether a header copy's byte ranges are inside the PHV and apart (or the same).
    fn copy_ok(&self, dst: u32, src: u32, len: u32) -> bool {
        let inside = dst.max(src).saturating_add(len) <= self.layout.phv_len;
        inside && (dst == src || dst.abs_diff(src) >= len)
    }

    /// Runs `op` through the flat engine.
    fn shim_op(&mut self, op: &Op) {
        let node = self.iconst(op as *const Op as u64);
        let (p, n) = self.params_or_none();
        let env = self.env;
        let sig = self.sigs.node;
        let code = self
            .call_shim(sig, self.shims.op, &[env, node, p, n])
            .expect("status");
        self.check_status(code, env::NEXT);
    }

    /// Calls action `a` with `params`/`n`: its generated function, else the flat engine.
    /// Answers its status (`EXIT` and `FAULT` matter; `RETURN` ended only the action).
    fn run_action(&mut self, a: u32, params: Value, n: Value) -> Value {
        let env = self.env;
        match self.action_ref(a) {
            Some(f) => {
                let call = self.b.ins().call(f, &[env, params, n]);
                self.b.inst_results(call)[0]
            }
            None => {
                let id = self.b.ins().iconst(types::I32, i64::from(a));
                let sig = self.sigs.action;
                self.call_shim(sig, self.shims.action, &[env, id, params, n])
                    .expect("status")
            }
        }
    }

    /// A direct action call: arguments into a stack buffer, then the action.
    fn call(&mut self, a: u32, args: &[FExpr]) {
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (MAX_ARGS * 16) as u32,
            4,
        ));
        let buf = self.b.ins().stack_addr(types::I64, slot, 0);
        for (i, e) in args.iter().enumerate() {
            let v = self.expr(e);
            self.store_value(buf, i as i32 * 16, v);
        }
        let n = self.iconst(args.len() as u64);
        if let Some(h) = self.shims.trace {
            self.trace_points += 1;
            let id = self.b.ins().iconst(types::I32, i64::from(a));
            let (env, sig) = (self.env, self.sigs.action);
            self.call_shim(sig, h.action, &[env, id, buf, n]);
        }
        let code = self.run_action(a, buf, n);
        self.check_status(code, RETURN);
    }

    /// A table apply: the keys, the lookup (which counts and makes the
    /// entry current), the action, the entry restored, then the branches.
    fn apply(&mut self, a: &FApply) {
        let inline = self.inline;
        let probe = match inline.probe(a.table, a.keys.len()) {
            Some(p) if !self.traced() => Some(p),
            _ => None,
        };
        let mut keys = Vec::with_capacity(a.keys.len());
        for k in a.keys.iter() {
            keys.push(self.expr(k));
        }
        let r = match probe {
            // The keys go into the environment only on the way to the apply shim.
            Some(probe) => self.inline_lookup(a.table, &keys, probe),
            None => {
                self.store_keys(&keys);
                let table = self.b.ins().iconst(types::I32, i64::from(a.table));
                let nkeys = self.b.ins().iconst(types::I32, a.keys.len() as i64);
                let (env, sig) = (self.env, self.sigs.apply);
                self.call_shim(sig, self.shims.apply, &[env, table, nkeys])
                    .expect("answer")
            }
        };
        let faulted = self.b.ins().band_imm(r, APPLY_FAULT as i64);
        let ok = self.b.create_block();
        self.b.ins().brif(faulted, self.fault, &[], ok, &[]);
        self.b.switch_to_block(ok);
        let action = self.b.ins().ireduce(types::I32, r);
        let hit = self.b.ins().band_imm(r, APPLY_HIT as i64);
        let ran = self.b.ins().band_imm(r, APPLY_RAN as i64);
        let (run_b, ran_b, after) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let code = self.b.append_block_param(after, types::I32);
        self.b.ins().brif(ran, ran_b, &[], run_b, &[]);
        // The shim ran the action: its status is in bits 40.. of the answer.
        self.b.switch_to_block(ran_b);
        let c = self.b.ins().ushr_imm(r, 40);
        let c = self.b.ins().ireduce(types::I32, c);
        self.b.ins().jump(after, &[c.into()]);
        self.b.switch_to_block(run_b);
        self.dispatch(a.table, action, after);
        self.b.switch_to_block(after);
        self.check_status(code, RETURN);
        self.branches(&a.branches, hit, action);
    }

    /// Stores key values into `Env::key`, where the apply shim reads them.
    pub(super) fn store_keys(&mut self, keys: &[Value]) {
        let key_off = std::mem::offset_of!(EnvLayout, key) as i32;
        for (i, v) in keys.iter().enumerate() {
            let env = self.env;
            self.store_key(env, key_off + i as i32 * 16, *v);
        }
    }

    /// Calls the action a lookup chose (a direct call per action of the table), restores the
    /// running entry and jumps to `after` with the action's status.
    fn dispatch(&mut self, table: u32, action: Value, after: Block) {
        let args_off = std::mem::offset_of!(EnvLayout, args) as i64;
        let params = self.b.ins().iadd_imm(self.env, args_off);
        let n = self.env_load(std::mem::offset_of!(EnvLayout, nargs));
        let ids: Vec<u32> = self.table_actions(table);
        let mut sw = Switch::new();
        let other = self.b.create_block();
        let mut cases = Vec::new();
        for id in ids {
            let blk = self.b.create_block();
            sw.set_entry(u128::from(id), blk);
            cases.push((id, blk));
        }
        sw.emit(&mut self.b, action, other);
        cases.push((u32::MAX, other));
        for (id, blk) in cases {
            self.b.switch_to_block(blk);
            let code = if id == u32::MAX {
                let env = self.env;
                let sig = self.sigs.action;
                self.call_shim(sig, self.shims.action, &[env, action, params, n])
                    .expect("status")
            } else {
                self.run_action(id, params, n)
            };
            self.restore_entry();
            self.b.ins().jump(after, &[code.into()]);
        }
    }

    /// `Ctx::entry = Env::saved_entry` (8 bytes, asserted above).
    fn restore_entry(&mut self) {
        let saved = self.env_load(std::mem::offset_of!(EnvLayout, saved_entry));
        let ctx = self.env_load(std::mem::offset_of!(EnvLayout, ctx));
        let off = self.shims.entry_off;
        self.b.ins().store(mem(), saved, ctx, off);
    }

    fn branches(&mut self, br: &FBranches, hit: Value, action: Value) {
        match br {
            FBranches::None => {}
            FBranches::HitMiss { hit: h, miss } => {
                let (hb, mb, done) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().brif(hit, hb, &[], mb, &[]);
                for (block, ops) in [(hb, h), (mb, miss)] {
                    self.b.switch_to_block(block);
                    self.block(ops);
                    self.b.ins().jump(done, &[]);
                }
                self.b.switch_to_block(done);
            }
            FBranches::ActionRun { cases, default } => {
                let done = self.b.create_block();
                for (id, ops) in cases.iter() {
                    let (yes, no) = (self.b.create_block(), self.b.create_block());
                    let is = self.b.ins().icmp_imm(IntCC::Equal, action, i64::from(id.0));
                    self.b.ins().brif(is, yes, &[], no, &[]);
                    self.b.switch_to_block(yes);
                    self.block(ops);
                    self.b.ins().jump(done, &[]);
                    self.b.switch_to_block(no);
                }
                self.block(default);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
        }
    }

    /// `emit` of headers lying back to back: one copy when all are valid, else one per
    /// valid header.
    fn emit(&mut self, parts: &[(u32, u32, u32)], offset: u32, len: u32) {
        let mut all = self.iconst(1);
        for &(h, _, _) in parts {
            let v = self.is_valid(h);
            all = self.b.ins().band(all, v);
        }
        let (one, each, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(all, one, &[], each, &[]);
        self.b.switch_to_block(one);
        self.emit_bytes(offset, len);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(each);
        if parts.len() > 1 {
            for &(h, o, l) in parts {
                let v = self.is_valid(h);
                let (yes, next) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(v, yes, &[], next, &[]);
                self.b.switch_to_block(yes);
                self.emit_bytes(o, l);
                self.b.ins().jump(next, &[]);
                self.b.switch_to_block(next);
            }
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// Appends PHV bytes `[offset, offset + len)` to the output: copied here when they fit
    /// its capacity, else by the emit shim (which grows it).
    fn emit_bytes(&mut self, offset: u32, len: u32) {
        let len_off = std::mem::offset_of!(EnvLayout, out_len);
        let cur = self.env_load(len_off);
        let new = self.b.ins().iadd_imm(cur, i64::from(len));
        let cap = self.env_load(std::mem::offset_of!(EnvLayout, out_cap));
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, new, cap);
        let (fast, slow, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(fits, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let base = self.env_load(std::mem::offset_of!(EnvLayout, out));
        let dst = self.b.ins().iadd(base, cur);
        self.copy_out(dst, offset, len);
        self.env_store(len_off, new);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        let o = self.b.ins().iconst(types::I32, i64::from(offset));
        let l = self.b.ins().iconst(types::I32, i64::from(len));
        let (env, sig) = (self.env, self.sigs.emit);
        let f = self.shims.emit;
        self.call_shim(sig, f, &[env, o, l]);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// `extract` into PHV bytes `[offset, offset + len)`: a byte-aligned cursor copies from
    /// the input (the packet where it lies, when parsed in place); an unaligned one runs the
    /// flat extract (never in place: see `parser_in_place`).
    fn extract(&mut self, op: &Op, header: u32, offset: u32, len: u32) {
        let cur_off = std::mem::offset_of!(EnvLayout, cursor);
        let cur = self.env_load(cur_off);
        let end = self.b.ins().iadd_imm(cur, i64::from(len) * 8);
        let limit = self.env_load(std::mem::offset_of!(EnvLayout, input_bits));
        let short = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, limit);
        let (fits, aligned, unaligned, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let too_short = self.too_short.expect("parser");
        self.b.ins().brif(short, too_short, &[], fits, &[]);
        self.b.switch_to_block(fits);
        let odd = self.b.ins().band_imm(cur, 7);
        self.b.ins().brif(odd, unaligned, &[], aligned, &[]);
        self.b.switch_to_block(unaligned);
        self.shim_op(op);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(aligned);
        self.extract_aligned(header, offset, len, cur, end);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// The byte-aligned extract: from the head (the prefix, or everything when not in place),
    /// from the tail (the packet, in place), or across both; then the cursor moves to `end`
    /// and the header is valid.
    fn extract_aligned(&mut self, header: u32, offset: u32, len: u32, cur: Value, end: Value) {
        let cur_off = std::mem::offset_of!(EnvLayout, cursor);
        let (copied, done) = (self.b.create_block(), self.b.create_block());
        let byte = self.b.ins().ushr_imm(cur, 3);
        let head = self.env_load(std::mem::offset_of!(EnvLayout, head_bytes));
        let (in_head, in_tail, split) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let past = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, byte, head);
        let check_head = self.b.create_block();
        self.b.ins().brif(past, in_tail, &[], check_head, &[]);
        self.b.switch_to_block(check_head);
        let last = self.b.ins().iadd_imm(byte, i64::from(len));
        let fits = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, last, head);
        self.b.ins().brif(fits, in_head, &[], split, &[]);
        self.b.switch_to_block(in_head);
        let input = self.env_load(std::mem::offset_of!(EnvLayout, input));
        let src = self.b.ins().iadd(input, byte);
        self.copy_in(src, offset, len);
        self.b.ins().jump(copied, &[]);
        self.b.switch_to_block(in_tail);
        let tail = self.env_load(std::mem::offset_of!(EnvLayout, tail));
        let rel = self.b.ins().isub(byte, head);
        let src = self.b.ins().iadd(tail, rel);
        self.copy_in(src, offset, len);
        self.b.ins().jump(copied, &[]);
        self.b.switch_to_block(copied);
        self.env_store(cur_off, end);
        self.set_valid(header, true);
        self.hook(|h| h.extract, header, None);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(split);
        let args = [
            self.env,
            self.b.ins().iconst(types::I32, i64::from(header)),
            self.b.ins().iconst(types::I32, i64::from(offset)),
            self.b.ins().iconst(types::I32, i64::from(len)),
        ];
        let (sig, f) = (self.sigs.extract, self.shims.extract_split);
        self.call_shim(sig, f, &args);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// Copies `len` bytes from `src` to PHV byte `offset`.
    fn copy_in(&mut self, src: Value, offset: u32, len: u32) {
        let phv = self.phv;
        self.copy_bytes((src, 0), (phv, offset), len);
    }

    /// Copies `len` PHV bytes from `offset` to `dst`.
    fn copy_out(&mut self, dst: Value, offset: u32, len: u32) {
        let phv = self.phv;
        self.copy_bytes((phv, offset), (dst, 0), len);
    }

    /// Copies `len` bytes from `src + so` to `dst + d_o`, widest loads first.
    fn copy_bytes(&mut self, (src, so): (Value, u32), (dst, d_o): (Value, u32), len: u32) {
        let mut i = 0u32;
        for (size, ty) in [
            (8u32, types::I64),
            (4, types::I32),
            (2, types::I16),
            (1, types::I8),
        ] {
            while len - i >= size {
                let v = self.b.ins().load(ty, mem(), src, (so + i) as i32);
                self.b.ins().store(mem(), v, dst, (d_o + i) as i32);
                i += size;
            }
        }
    }

    /// Action ids a table's entries and default may run.
    fn table_actions(&self, table: u32) -> Vec<u32> {
        self.table_action_ids
            .get(table as usize)
            .cloned()
            .unwrap_or_default()
    }
}
