//! A table's placement annotations, read for the resource check: `@stage(...)` (where the
//! table starts) and the string form of `@placement_priority` (the tables it goes before).
//! The numeric `@placement_priority(n)` is read with the sizing annotations (`table.rs`).
//!
//! The forms accepted, and the errors for the others, are bf-p4c's (ir/mau.cpp
//! `get_provided_stage`: "Stage pragma provided can have only one or two constant parameters
//! \>= 0", string flags `"immediate"` / `"noimmediate"` after the stage, any other flag
//! refused); what the placement does with them is in `resources/pins.rs`.

use pipeline::ir;

use super::Lowerer;
use crate::ast;
use crate::diag::Diagnostic;
use crate::resources::layout::StagePin;

/// The flags bf-p4c accepts in `@stage` (they pick the action data layout of that stage,
/// which pisa does not model: accepted and without effect).
const STAGE_FLAGS: [&str; 2] = ["immediate", "noimmediate"];

impl<'a> Lowerer<'a> {
    /// Records table `id`'s `@stage` and `@placement_priority("...")` annotations.
    pub(super) fn placement_annotations(
        &mut self,
        id: ir::TableId,
        name: &str,
        annos: &'a [ast::Annotation],
    ) {
        for a in annos {
            match a.name.name.as_str() {
                "stage" => {
                    if let Some(pin) = self.stage_pin(id, name, a) {
                        self.spans.hints.stage_pins.push(pin);
                    }
                }
                "placement_priority" => {
                    let ast::AnnotationBody::Exprs(es) = &a.body else {
                        continue;
                    };
                    for e in es {
                        if let ast::ExprKind::String(s) = &e.kind {
                            self.spans.hints.priority_over.push((id, s.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// One `@stage(stage [, entries] [, "flag"...])`, or `None` after an error.
    fn stage_pin(
        &mut self,
        id: ir::TableId,
        name: &str,
        a: &'a ast::Annotation,
    ) -> Option<StagePin> {
        let es: &'a [ast::Expr] = match &a.body {
            ast::AnnotationBody::Exprs(es) => es,
            _ => &[],
        };
        let mut ints: Vec<i128> = Vec::new();
        let mut valid = !es.is_empty() && !matches!(es[0].kind, ast::ExprKind::String(_));
        for e in es {
            if let ast::ExprKind::String(flag) = &e.kind {
                if !STAGE_FLAGS.contains(&flag.as_str()) {
                    self.err(
                        Diagnostic::error(format!(
                            "invalid flag \"{flag}\" in `@stage` on table `{name}`"
                        ))
                        .with_primary(e.span, "not a stage flag")
                        .with_help("bf-p4c's flags are \"immediate\" and \"noimmediate\""),
                    );
                    return None;
                }
                continue;
            }
            match self.const_int(e) {
                Ok(n) if n >= 0 => ints.push(n),
                Ok(_) => valid = false,
                Err(_) => return None,
            }
        }
        if !valid || ints.is_empty() || ints.len() > 2 {
            self.err(
                Diagnostic::error(format!(
                    "invalid `@stage` on table `{name}`: it takes one or two constants >= 0 (the \
                     stage, then the number of entries to place there), then optional flags"
                ))
                .with_primary(a.span, "as bf-p4c, pisa refuses this form"),
            );
            return None;
        }
        Some(StagePin {
            table: id,
            stage: u32::try_from(ints[0]).unwrap_or(u32::MAX),
            entries: ints.get(1).map(|&n| u32::try_from(n).unwrap_or(u32::MAX)),
        })
    }
}
