//! The trace events of a pass, built in one place for every engine: the tree interpreter, the
//! flat program and the native code's trace hooks all call these, so an event means the same
//! (same names, values and widths) whichever engine recorded it.
//!
//! Each builder is cheap to call with a disabled tracer: it returns before building anything
//! when [`Tracer::ENABLED`] is false.

use super::parser::ParseEnd;
use super::Ctx;
use crate::ir::{ActionId, Expr, FieldRef, Gress, Intrinsic, TableId, Value};
use crate::names::Names;
use crate::trace::{TraceEvent, TraceField, Tracer};

impl<T: Tracer> Ctx<'_, T> {
    /// `ParserState`: the parser entered state `state` (an index of the gress's parser).
    #[inline]
    pub(crate) fn trace_state(&mut self, state: usize) {
        if !T::ENABLED {
            return;
        }
        let name = self
            .pl_gress()
            .parser
            .states
            .get(state)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        self.tr.record(|| TraceEvent::ParserState { name });
    }

    /// `Extract`: header `h` was extracted; its fields as the PHV now holds them.
    #[inline]
    pub(crate) fn trace_extract(&mut self, h: usize) {
        if !T::ENABLED {
            return;
        }
        let gp = self.pl_gress();
        let Some(info) = gp.phv.headers.get(h) else {
            return;
        };
        let fields = gp.phv.fields[info.fields.start as usize..info.fields.end as usize]
            .iter()
            .flat_map(|f| {
                // A field wider than a value shows as its pieces, `name[hi:lo]`.
                let wide = f.field.width > crate::ir::MAX_VALUE_WIDTH;
                f.field.chunks().map(move |(piece, hi, lo)| {
                    let name = if wide {
                        format!("{}[{hi}:{lo}]", f.name)
                    } else {
                        f.name.clone()
                    };
                    (name, piece)
                })
            })
            .map(|(name, piece)| TraceField::new(name, self.phv.get(piece), piece.width))
            .collect();
        let header = info.name.clone();
        self.tr.record(|| TraceEvent::Extract { header, fields });
    }

    /// How the parse ended (`ParserAccept`, `ParserReject`, `ParserError`); `last` is the state
    /// the parser was in when it ended (for accept and reject).
    #[inline]
    pub(crate) fn trace_parse_end(&mut self, end: ParseEnd, last: usize) {
        if !T::ENABLED {
            return;
        }
        let at = match end {
            ParseEnd::Error(_, s) => s,
            _ => last,
        };
        let name = self
            .pl_gress()
            .parser
            .states
            .get(at)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        match end {
            ParseEnd::Accept => self.tr.record(|| TraceEvent::ParserAccept),
            ParseEnd::Reject => self.tr.record(|| TraceEvent::ParserReject { state: name }),
            ParseEnd::Error(f, _) => self.tr.record(|| TraceEvent::ParserError {
                state: name,
                error: f.to_string(),
                bits: f.bits(),
            }),
        }
    }

    /// `Gateway`: an `if` in `stage` on `cond` went `result`.
    #[inline]
    pub(crate) fn trace_gate(&mut self, stage: u8, cond: &Expr, result: bool) {
        if !T::ENABLED {
            return;
        }
        let cond = Names::new(self.pl, &self.pl_gress().phv).expr(cond);
        self.tr.record(|| TraceEvent::Gateway {
            stage,
            cond,
            result,
        });
    }

    /// `Table`: table `t` looked up `key`, hit or missed, and runs `action` with `args`.
    #[inline]
    pub(crate) fn trace_table(
        &mut self,
        t: TableId,
        key: &[Value],
        hit: bool,
        action: ActionId,
        args: &[Value],
    ) {
        if !T::ENABLED {
            return;
        }
        let pl = self.pl;
        let Some(t) = pl.tables.get(t.index()) else {
            return;
        };
        let keys = t
            .keys
            .iter()
            .zip(key.iter())
            .map(|(k, v)| TraceField::new(k.name.clone(), *v, k.expr.width()))
            .collect();
        let act = pl.actions.get(action.index());
        let params = act
            .map(|a| {
                a.params
                    .iter()
                    .zip(args.iter())
                    .map(|(p, v)| TraceField::new(p.name.clone(), *v, p.width))
                    .collect()
            })
            .unwrap_or_default();
        self.tr.record(|| TraceEvent::Table {
            stage: t.stage,
            table: t.name.clone(),
            hit,
            keys,
            action: act.map(|a| a.name.clone()).unwrap_or_default(),
            params,
        });
    }

    /// `Action`: a direct call of `action` with `args` (table-invoked actions are traced with
    /// their table).
    #[inline]
    pub(crate) fn trace_action(&mut self, action: ActionId, args: &[Value]) {
        if !T::ENABLED {
            return;
        }
        if let Some(act) = self.pl.actions.get(action.index()) {
            let params = act
                .params
                .iter()
                .zip(args.iter())
                .map(|(p, v)| TraceField::new(p.name.clone(), *v, p.width))
                .collect();
            self.tr.record(|| TraceEvent::Action {
                action: act.name.clone(),
                params,
            });
        }
    }

    /// `DropMarked`: `v` (the value assigned, before the field's width cuts it) was written to
    /// field `f`; recorded when `f` is the gress's `drop_ctl` and `v` is not zero.
    #[inline]
    pub(crate) fn trace_drop_mark(&mut self, f: FieldRef, v: Value) {
        if !T::ENABLED || v == 0 || self.drop_ctl() != Some(f) {
            return;
        }
        let field = Names::new(self.pl, &self.pl_gress().phv).field(f);
        self.tr
            .record(|| TraceEvent::DropMarked { field, value: v });
    }

    /// The PHV field of this gress's `drop_ctl` intrinsic, when the program binds it.
    pub(crate) fn drop_ctl(&self) -> Option<FieldRef> {
        drop_ctl_field(self.eng.gress(self.gress), self.gress)
    }

    /// `Exit`.
    #[inline]
    pub(crate) fn trace_exit(&mut self) {
        self.tr.record(|| TraceEvent::Exit);
    }
}

/// The PHV field of `gress`'s `drop_ctl` intrinsic in `geng`, when the program binds it.
pub(crate) fn drop_ctl_field(geng: &super::GressEngines, gress: Gress) -> Option<FieldRef> {
    let which = match gress {
        Gress::Ingress => Intrinsic::IgDprsrDropCtl,
        Gress::Egress => Intrinsic::EgDprsrDropCtl,
    };
    geng.bind.get(which as usize).copied().flatten()
}
