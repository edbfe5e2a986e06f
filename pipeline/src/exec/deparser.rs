//! Deparser statements: `emit` (valid headers only, in program order), mirror / resubmit
//! requests with their headers, and digest packing. Checksum updates are ordinary assignments
//! whose value is an `Expr::ChecksumUpdate`.

use super::{Ctx, ExecResult, Fault, ProgramError};
use crate::ir::{FieldRef, Stmt, Value};
use crate::phv::pack_bits;
use crate::trace::{TraceEvent, Tracer};

/// Largest mirror header Tofino carries (bytes).
pub const MAX_MIRROR_HEADER: usize = 32;
/// Bytes of a `Pktgen.emit` header the packet generator matches (Tofino 2: 128 bits).
pub const PKTGEN_TRIGGER_BYTES: usize = 16;
/// Most digests kept per pass (more are counted as overflow).
pub const MAX_DIGESTS_PER_PASS: usize = 8;

impl<T: Tracer> Ctx<'_, T> {
    /// Run a deparser statement, appending emitted bytes to `out`.
    #[inline(never)]
    pub(crate) fn exec_deparser_stmt(&mut self, s: &Stmt, params: &[Value]) -> ExecResult<()> {
        match s {
            Stmt::Emit(h) => {
                // Emitted bytes are collected by the gress runner from the PHV after the
                // deparser body: remember the order here.
                if self.phv.is_valid(h.index()) {
                    self.scratch_emit(h.index())?;
                }
            }
            Stmt::MirrorEmit { session, header } => {
                let sid = self.eval(session, params)?;
                let mut vals: smallvec::SmallVec<[(Value, u16); 8]> = smallvec::SmallVec::new();
                for e in header {
                    vals.push((self.eval(e, params)?, self.width_of(e)));
                }
                self.mirror_request(sid, &vals);
            }
            Stmt::ResubmitEmit { header } => {
                let mut vals: smallvec::SmallVec<[(Value, u16); 8]> = smallvec::SmallVec::new();
                for e in header {
                    vals.push((self.eval(e, params)?, self.width_of(e)));
                }
                self.effects.resubmit = true;
                self.effects.resubmit_data.clear();
                pack_bits(&mut self.effects.resubmit_data, vals.into_iter());
            }
            Stmt::PktgenEmit { header } => {
                let mut vals: smallvec::SmallVec<[(Value, u16); 8]> = smallvec::SmallVec::new();
                for e in header {
                    vals.push((self.eval(e, params)?, self.width_of(e)));
                }
                self.effects.pktgen_data.clear();
                pack_bits(&mut self.effects.pktgen_data, vals.into_iter());
                self.effects.pktgen_data.truncate(PKTGEN_TRIGGER_BYTES);
            }
            Stmt::DigestPack { digest, fields } => {
                let mut vals = Vec::with_capacity(fields.len());
                for e in fields {
                    vals.push(self.eval(e, params)?);
                }
                self.digest_pack(digest.0, vals);
            }
            _ => return Err(Fault::program(ProgramError::ParserOnly)),
        }
        Ok(())
    }

    /// `mirror.emit(session, {..})` with the session's value and the header's values at
    /// their widths (every engine evaluates them its own way, then calls this).
    pub(crate) fn mirror_request(&mut self, session: Value, header: &[(Value, u16)]) {
        self.effects.mirror = Some(session as u16);
        self.effects.mirror_header.clear();
        pack_bits(&mut self.effects.mirror_header, header.iter().copied());
        self.effects.mirror_header.truncate(MAX_MIRROR_HEADER);
    }

    /// `digest.pack({..})` of digest `digest` with its fields' values: traced, then kept
    /// (up to [`MAX_DIGESTS_PER_PASS`] a pass; more are counted as overflow).
    pub(crate) fn digest_pack(&mut self, digest: u32, vals: Vec<Value>) {
        if T::ENABLED {
            let name = self
                .pl
                .digests
                .get(digest as usize)
                .map(|d| d.name.clone())
                .unwrap_or_default();
            let values = vals.clone();
            self.tr.record(|| TraceEvent::Digest {
                digest: name,
                values,
            });
        }
        if self.effects.digests.len() < MAX_DIGESTS_PER_PASS {
            self.effects.digests.push((digest, vals));
        } else {
            self.stats.digest_overflow += 1;
        }
    }

    #[inline]
    pub(crate) fn scratch_emit(&mut self, h: usize) -> ExecResult<()> {
        let pl = self.pl;
        let gp = match self.gress {
            crate::ir::Gress::Ingress => &pl.ingress,
            crate::ir::Gress::Egress => &pl.egress,
        };
        let Some(info) = gp.phv.headers.get(h) else {
            return Err(Fault::program(ProgramError::BadReference("header")));
        };
        if let Some(vb) = gp.phv.varbit(crate::ir::HeaderId(h as u32)) {
            // The fixed fields around the varbit field's current length.
            let start = info.byte_offset * 8;
            let end = start + info.byte_len * 8;
            let tail = vb.field.offset + u32::from(vb.field.width);
            let n = (self.phv.get(vb.len) as u32).min(u32::from(vb.field.width));
            let phv = &self.phv;
            let pieces = |from: u32, to: u32| {
                (from..to).step_by(128).map(move |o| {
                    let w = (to - o).min(128) as u16;
                    (
                        phv.get(FieldRef {
                            offset: o,
                            width: w,
                        }),
                        w,
                    )
                })
            };
            let parts = pieces(start, vb.field.offset)
                .chain(pieces(vb.field.offset, vb.field.offset + n))
                .chain(pieces(tail, end));
            pack_bits(self.emit_out, parts);
            return Ok(());
        }
        let bytes = self
            .phv
            .slice(info.byte_offset as usize, info.byte_len as usize);
        self.emit_out.extend_from_slice(bytes);
        Ok(())
    }
}
