//! The P4 frontend's semantic half, first part: what names and types mean.
//!
//! [`env`] indexes the top-level declarations (the user's and the built-in architecture's) and
//! resolves written types to [`types::Ty`]; [`rules`] holds the typing rules of operators,
//! casts and literals; [`annotations`] decides which annotations pisa keeps and which it reports
//! as ignored. The lowering (`crate::lower`) applies these while it elaborates the program from
//! `main`, so every construct that reaches the IR has been checked on the way.

pub mod annotations;
pub mod body_rules;
pub mod control_returns;
pub mod env;
pub mod inline_functions;
pub mod named_args;
pub mod newtypes;
pub mod rules;
pub mod suggest;
pub mod table_hit;
pub mod types;

pub use env::Env;
pub use types::Ty;

use crate::diag::Diagnostic;
use crate::source::Span;

/// An "unsupported construct" error in the house style.
pub fn unsupported(span: Span, construct: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "unsupported: {construct} (pisa does not model {why})"
    ))
    .with_primary(span, "not supported by pisa")
}
