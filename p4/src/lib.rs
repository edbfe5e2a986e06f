//! pisa's P4_16 TNA frontend: preprocessing, lexing, parsing (this half), then checking and
//! lowering to the pipeline IR (added by the checker's modules).

pub mod ast;
pub mod builtin;
pub mod diag;
pub mod lexer;
pub mod preprocess;
pub mod source;
