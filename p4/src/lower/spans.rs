//! The side table from IR objects back to source spans, so later passes (the resource check)
//! can point their diagnostics at the P4 the user wrote.

use crate::source::Span;

/// Spans of one gress's parser, control and deparser.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GressSpans {
    /// Per `ir::Parser::states` index: the state (continuation states point at the sub-parser
    /// call that split them).
    pub parser_states: Vec<Span>,
    /// The condition of every `Stmt::If` of the control body (actions excluded), in pre-order.
    pub control_ifs: Vec<Span>,
    /// The condition of every `Stmt::If` of the deparser body, in pre-order.
    pub deparser_ifs: Vec<Span>,
}

/// Spans of one `ir::Pipeline`'s objects, indexed like the pipeline's vectors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineSpans {
    pub tables: Vec<Span>,
    /// Not spans: the ALPM / ATCAM layouts the source gives tables (`implementation =
    /// Alpm(..)`), which the resource check sizes them by, and their
    /// `@ignore_table_dependency` annotations.
    pub hints: crate::resources::layout::Hints,
    pub actions: Vec<Span>,
    pub registers: Vec<Span>,
    pub register_actions: Vec<Span>,
    pub hashes: Vec<Span>,
    pub counters: Vec<Span>,
    pub meters: Vec<Span>,
    pub ingress: GressSpans,
    pub egress: GressSpans,
}

/// Spans for a whole `ir::Program`, indexed like `Program::pipelines`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceSpans {
    pub pipelines: Vec<PipelineSpans>,
}
