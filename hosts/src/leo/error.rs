//! What LEO refuses: bad application or hardware files (with the place), unknown names, and
//! solver failures.

use thiserror::Error;

/// A LEO error.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LeoError {
    /// The YAML does not parse or does not fit the schema.
    #[error("{line}:{column}: {message}")]
    Yaml {
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column (0 when unknown).
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A name that the file uses but never defines.
    #[error("{context}: unknown {what} `{name}`")]
    Unknown {
        /// Where it was used (e.g. `path acc`).
        context: String,
        /// What kind of name (device, link, path).
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A name defined twice.
    #[error("duplicate {what} `{name}`")]
    Duplicate {
        /// What kind of name.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A value out of its range or a structure that cannot work.
    #[error("{context}: {message}")]
    Invalid {
        /// Where.
        context: String,
        /// Why.
        message: String,
    },
    /// A link that was never profiled.
    #[error("link `{0}` has no profile: call HardwareModel::profile first")]
    NotProfiled(String),
    /// The LP solver failed.
    #[error("LP solver: {0}")]
    Solver(String),
}

impl LeoError {
    /// An [`LeoError::Invalid`] of `context`.
    pub fn invalid(context: impl Into<String>, message: impl Into<String>) -> LeoError {
        LeoError::Invalid {
            context: context.into(),
            message: message.into(),
        }
    }
}
