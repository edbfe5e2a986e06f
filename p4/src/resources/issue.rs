//! What the resource check says when a program does not fit (or fits only in the emulator):
//! [`ResourceIssue`]s that point at IR objects through [`ObjectRef`], so the lowering can map
//! them back to source spans and render them like rustc.

use std::fmt;

use pipeline::ir::{CounterId, Gress, RegisterActionId, RegisterId, TableId};

use crate::diag::{Diagnostic, Severity};

/// The IR object an issue is about. `pipeline` is an index into `Program::pipelines`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectRef {
    Table(usize, TableId),
    RegisterAction(usize, RegisterActionId),
    Register(usize, RegisterId),
    Counter(usize, CounterId),
    /// A `Stmt::If` of a gress's control. `index` is its pre-order position among the `If`s of
    /// `control.body`: walk the body in order, count an `If` before its `then` then `els`
    /// blocks, descend into table branches (hit before miss; `action_run` cases in order, then
    /// `default`), and never into action bodies. [`super::gateway_order`] does this walk.
    Gateway {
        pipeline: usize,
        gress: Gress,
        index: usize,
    },
    /// A state of a gress's parser (`state` indexes `Parser::states`).
    ParserState {
        pipeline: usize,
        gress: Gress,
        state: usize,
    },
    /// The pipeline as a whole (stage counts, and statements outside tables).
    Pipeline(usize),
}

/// Which rule an issue is about (stable, for tests and tools; the message is for people).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IssueKind {
    /// A gress needs more MAU stages than the target has.
    TooManyStages,
    /// A register is executed twice on one path through a gress.
    RegisterAccessedTwice,
    /// A table is applied twice on one path through a gress.
    TableAppliedTwice,
    /// Two accesses of one register cannot share a stage (one depends on the other).
    RegisterStageConflict,
    /// A RegisterAction needs more than the stateful ALU offers.
    SaluTooComplex,
    /// A gateway condition the hardware cannot evaluate.
    GatewayTooComplex,
    /// Table keys (or other inputs) wider than the stage's input crossbar.
    CrossbarTooWide,
    /// A table (or its attached memories) larger than one stage.
    TableTooLarge,
    /// A register width or layout the hardware lacks.
    RegisterLayout,
    /// Something the emulator runs but the hardware (or bf-p4c) would not.
    EmulatorOnly,
    /// A parser the target's parser cannot run (a field written twice on Tofino 1).
    ParserRule,
    /// The header fields one parse path must hold at once do not fit the PHV containers.
    PhvCapacity,
    /// A placement annotation (`@stage`, `@placement_priority`) the placement cannot honour.
    StagePin,
    /// The IR is inconsistent (an id out of range): a frontend bug, reported rather than panicking.
    MalformedIr,
}

/// One finding of the resource check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceIssue {
    /// `Error` or `Warning` (never `Note`).
    pub severity: Severity,
    pub kind: IssueKind,
    pub message: String,
    pub object: ObjectRef,
    pub help: Vec<String>,
    pub notes: Vec<String>,
}

impl ResourceIssue {
    pub fn error(kind: IssueKind, object: ObjectRef, message: impl Into<String>) -> Self {
        ResourceIssue {
            severity: Severity::Error,
            kind,
            message: message.into(),
            object,
            help: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(kind: IssueKind, object: ObjectRef, message: impl Into<String>) -> Self {
        ResourceIssue {
            severity: Severity::Warning,
            ..ResourceIssue::error(kind, object, message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// A [`Diagnostic`] without labels; the caller adds the span of [`ResourceIssue::object`].
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::new(self.severity, self.message.clone());
        d.notes = self.notes.clone();
        d.help = self.help.clone();
        d
    }
}

impl fmt::Display for ResourceIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.as_str(), self.message)?;
        for n in &self.notes {
            write!(f, "\n  = note: {n}")?;
        }
        for h in &self.help {
            write!(f, "\n  = help: {h}")?;
        }
        Ok(())
    }
}
