//! [`TableError`]: why a control-plane request on a match table was refused.
//!
//! Every variant names the culprit (key field index, values, the colliding handle) so that
//! the runtime API can report it to a BfRt-style client without guessing.

use crate::ir::{MatchKind, Value};

use super::EntryHandle;

/// A refused table operation. Field indices count from 0 in the table's key order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("wrong number of key fields: the table has {expected}, the request gave {got}")]
    KeyCount { expected: usize, got: usize },
    #[error("key field {field} is `{expected}` but the request gave a {got} match")]
    KindMismatch {
        field: usize,
        expected: MatchKind,
        got: MatchKind,
    },
    #[error("key field {field}: value {value:#x} does not fit in {width} bits")]
    ValueTooWide {
        field: usize,
        value: Value,
        width: u16,
    },
    #[error("key field {field}: mask {mask:#x} does not fit in {width} bits")]
    MaskTooWide {
        field: usize,
        mask: Value,
        width: u16,
    },
    #[error(
        "key field {field}: prefix length {prefix_len} is longer than the field ({width} bits)"
    )]
    PrefixTooLong {
        field: usize,
        prefix_len: u16,
        width: u16,
    },
    #[error("key field {field}: range low end {lo:#x} is above the high end {hi:#x}")]
    RangeInverted { field: usize, lo: Value, hi: Value },
    #[error("this table has ternary/range keys: every entry needs a match priority")]
    PriorityMissing,
    #[error("this table has only exact/LPM keys: entries take no match priority")]
    PriorityForbidden,
    #[error("an entry with the same key already exists (handle {0})")]
    Duplicate(EntryHandle),
    #[error("no entry with that key")]
    NotFound,
    #[error("table full ({capacity} entries)")]
    Full { capacity: u32 },
}
