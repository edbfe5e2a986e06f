//! [`ApiError`]: why a runtime-API request was refused, naming the culprit (the table, key,
//! action, parameter, index...) and, for unknown names, the closest known ones.

use thiserror::Error;

use crate::externs::meter::MeterError;
use crate::ir::{MatchKind, Value};
use crate::table::TableError;
use crate::tm::mirror::MirrorError;
use crate::tm::pre::PreError;
use crate::tm::qid_map::QidMapError;
use crate::tm::queue::QueueError;

fn did_you_mean(s: &[String]) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", s.join(", "))
    }
}

/// A refused runtime-API request.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ApiError {
    #[error("unknown {kind} `{name}`{}", did_you_mean(.suggestions))]
    Unknown {
        kind: &'static str,
        name: String,
        suggestions: Vec<String>,
    },
    #[error("{kind} name `{name}` is ambiguous; candidates: {}", .candidates.join(", "))]
    Ambiguous {
        kind: &'static str,
        name: String,
        candidates: Vec<String>,
    },
    #[error("table {table} has no key field `{key}`{}", did_you_mean(.suggestions))]
    UnknownKey {
        table: String,
        key: String,
        suggestions: Vec<String>,
    },
    #[error("table {table}: key field `{key}` given twice")]
    DuplicateKey { table: String, key: String },
    #[error("table {table} has {expected} key fields, the request gave {got}")]
    KeyCount {
        table: String,
        expected: usize,
        got: usize,
    },
    #[error("table {table}: exact key field `{key}` is missing")]
    MissingKey { table: String, key: String },
    #[error("table {table}: key field `{key}` is {expected}, the request gave a {got} match")]
    KeyKind {
        table: String,
        key: String,
        expected: MatchKind,
        got: MatchKind,
    },
    #[error("{what}: value {value:#x} does not fit in {width} bits")]
    ValueTooWide {
        what: String,
        value: Value,
        width: u16,
    },
    #[error("action {action} is not an action of table {table} (its actions: {})", .available.join(", "))]
    ActionNotInTable {
        table: String,
        action: String,
        available: Vec<String>,
    },
    #[error("action {action} of table {table} is @defaultonly: it cannot be an entry's action")]
    DefaultOnly { table: String, action: String },
    #[error("action {action} of table {table} is @tableonly: it cannot be the default action")]
    TableOnly { table: String, action: String },
    #[error("table {table} has const entries: its entries cannot change")]
    ConstTable { table: String },
    #[error("table {table} has a const default action")]
    ConstDefault { table: String },
    #[error("action {action} has no parameter `{param}`{}", did_you_mean(.suggestions))]
    UnknownParam {
        action: String,
        param: String,
        suggestions: Vec<String>,
    },
    #[error("action {action}: parameter `{param}` is missing")]
    MissingParam { action: String, param: String },
    #[error("action {action}: parameter `{param}` given twice")]
    DuplicateParam { action: String, param: String },
    #[error("{kind} {name}: index {index} is out of range (size {size})")]
    IndexOutOfRange {
        kind: &'static str,
        name: String,
        index: u64,
        size: u32,
    },
    #[error("{kind} {name} is {actual}; use the {form} form of this request")]
    WrongForm {
        kind: &'static str,
        name: String,
        /// What the object is (`a single-word register`, `direct`).
        actual: &'static str,
        /// The request form for it (`single-word`, `direct`).
        form: &'static str,
    },
    #[error(
        "table {table}: its default entry has no direct meter cell (a miss meters nothing: \
         every packet GREEN)"
    )]
    NoDefaultCell { table: String },
    #[error("table {table}: an entry with this key already exists")]
    DuplicateEntry { table: String },
    #[error("table {table}: no entry with this key")]
    EntryNotFound { table: String },
    #[error("table {table} is full ({capacity} entries)")]
    TableFull { table: String, capacity: u32 },
    #[error("table {table}: {error}")]
    Table { table: String, error: TableError },
    #[error("action profile {profile}: {error}")]
    Profile {
        profile: String,
        error: crate::table::profile::ProfileError,
    },
    #[error("table {table} {why}")]
    ProfileTable { table: String, why: &'static str },
    #[error("table {table} has no idle timeout (declare it with `idle_timeout = true`)")]
    NoIdleTimeout { table: String },
    #[error("value set {set} has {expected} field(s), the request gave {got}")]
    ValueSetFields {
        set: String,
        expected: usize,
        got: usize,
    },
    #[error("value set {set}: {why}")]
    ValueSetEntry { set: String, why: &'static str },
    #[error("value set {set} is full ({capacity} entries, one parser TCAM row each)")]
    ValueSetFull { set: String, capacity: u32 },
    #[error("pipe {pipe} does not exist (the switch has {pipes})")]
    BadPipe { pipe: u16, pipes: u16 },
    #[error("pipe {pipe} runs pipeline {running}, which has no {name}")]
    WrongPipe {
        pipe: u16,
        name: String,
        running: String,
    },
    #[error("port {port} does not exist on this switch")]
    BadPort { port: u16 },
    #[error(
        "port {port}: {bytes} bytes of port metadata, more than the chip's {max}-byte phase-0 word"
    )]
    PortMetadataTooLong { port: u16, bytes: usize, max: usize },
    #[error(transparent)]
    Pre(#[from] PreError),
    #[error(transparent)]
    Mirror(#[from] MirrorError),
    #[error("queue of port {port}: {error}")]
    Queue { port: u16, error: QueueError },
    #[error("queues of port {port}: {error}")]
    QueueMap { port: u16, error: QidMapError },
    #[error("meter {name}: {error}")]
    Meter { name: String, error: MeterError },
    #[error("filter {name}: {error}")]
    Filter {
        name: String,
        error: crate::externs::filter::FilterSpecError,
    },
}
