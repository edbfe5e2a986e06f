//! The request language of `pisa run --ctl`'s control socket: one JSON object per line with an
//! `op` (the table of ops is in the binary's `src/cmd/ctl.rs`), read into [`Request`]. Keys and
//! action data travel as table-file text ([`texts`]) and are resolved against the program like a
//! table file's (`crate::resolve`). Lives here, not in the binary, so that the fuzz target
//! (`fuzz/targets/src/control_ctl_request.rs`) reaches the same reader the server uses.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use crate::tables_file::Text;

/// Why a request line was refused before it reached the switch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CtlError {
    #[error("bad request: {0}")]
    BadRequest(String),
}

/// The entry of a `table_add` or `table_modify` request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryRequest {
    pub table: String,
    #[serde(default)]
    pub key: BTreeMap<String, Json>,
    #[serde(default)]
    pub priority: Option<u32>,
    pub action: String,
    #[serde(default)]
    pub params: BTreeMap<String, Json>,
    /// The entry's TTL in ms (tables with `idle_timeout = true`; 0: never ages).
    #[serde(default)]
    pub ttl_ms: Option<u64>,
}

/// A request, as parsed from one line.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// A struct variant (not a unit one) so that unknown fields are refused here too.
    Stats {},
    CounterRead {
        name: String,
        index: u32,
        #[serde(default)]
        pipe: Option<u16>,
    },
    RegisterRead {
        name: String,
        index: u32,
        #[serde(default)]
        pipe: Option<u16>,
    },
    /// A meter's byte count adjustment, and with `index` that cell's rates.
    MeterRead {
        name: String,
        #[serde(default)]
        index: Option<u32>,
        #[serde(default)]
        pipe: Option<u16>,
    },
    TableAdd(EntryRequest),
    TableDelete {
        table: String,
        #[serde(default)]
        key: BTreeMap<String, Json>,
        #[serde(default)]
        priority: Option<u32>,
    },
    TableModify(EntryRequest),
    TableList {
        table: String,
    },
    Apply {
        yaml: String,
    },
    QueueGet {
        port: u16,
    },
    LinkGet {
        port: u16,
    },
    LinkSet {
        port: u16,
        settings: String,
    },
    LinkDown {
        port: u16,
    },
    LinkUp {
        port: u16,
    },
    /// An action profile's members and groups.
    ProfileRead {
        profile: String,
    },
    MemberDelete {
        profile: String,
        id: u32,
    },
    GroupDelete {
        profile: String,
        id: u32,
    },
    /// A parser value set's entries.
    ValueSetRead {
        set: String,
    },
    /// Remove a value set entry: per field a match text, by field name (`f1` for a `bit<N>`
    /// set) or, for a one-field set, under the name `""`.
    ValueSetDelete {
        set: String,
        fields: BTreeMap<String, Json>,
    },
}

/// A JSON scalar as table-file text.
fn text(field: &str, v: &Json) -> Result<String, String> {
    match v {
        Json::String(s) => Ok(s.clone()),
        Json::Number(n) if n.is_u64() || n.is_i64() => Ok(n.to_string()),
        // JSON readers keep integers to 64 bits: a wider one arrives as a float, which is not
        // the value the client wrote.
        Json::Number(_) => Err(format!(
            "`{field}`: a JSON number here is an integer of at most 64 bits; write a wider value \
             as a string (\"0x…\", \"2001:db8::1\", ...)"
        )),
        Json::Bool(b) => Ok(u8::from(*b).to_string()),
        _ => Err(format!("`{field}`: expected a number or a string, got {v}")),
    }
}

/// The fields of a `key` or `params` object as table-file text, by name.
pub fn texts(m: &BTreeMap<String, Json>) -> Result<BTreeMap<String, Text>, String> {
    m.iter()
        .map(|(k, v)| Ok((k.clone(), Text(text(k, v)?))))
        .collect()
}

impl Request {
    /// Reads one request line.
    pub fn parse(line: &str) -> Result<Request, CtlError> {
        serde_json::from_str(line).map_err(|e| CtlError::BadRequest(e.to_string()))
    }

    /// The request's `op`, as written on the wire.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Stats {} => "stats",
            Request::CounterRead { .. } => "counter_read",
            Request::RegisterRead { .. } => "register_read",
            Request::MeterRead { .. } => "meter_read",
            Request::TableAdd(_) => "table_add",
            Request::TableDelete { .. } => "table_delete",
            Request::TableModify(_) => "table_modify",
            Request::TableList { .. } => "table_list",
            Request::Apply { .. } => "apply",
            Request::QueueGet { .. } => "queue_get",
            Request::LinkGet { .. } => "link_get",
            Request::LinkSet { .. } => "link_set",
            Request::LinkDown { .. } => "link_down",
            Request::LinkUp { .. } => "link_up",
            Request::ProfileRead { .. } => "profile_read",
            Request::MemberDelete { .. } => "member_delete",
            Request::GroupDelete { .. } => "group_delete",
            Request::ValueSetRead { .. } => "value_set_read",
            Request::ValueSetDelete { .. } => "value_set_delete",
        }
    }

    /// Whether the request changes the switch or a link.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Request::TableAdd(_)
                | Request::TableDelete { .. }
                | Request::TableModify(_)
                | Request::Apply { .. }
                | Request::LinkSet { .. }
                | Request::LinkDown { .. }
                | Request::LinkUp { .. }
                | Request::MemberDelete { .. }
                | Request::GroupDelete { .. }
                | Request::ValueSetDelete { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON integer past 64 bits is read as a float by serde_json: refused with what to
    /// write instead, not shown as the float the client never sent.
    #[test]
    fn json_numbers_are_64_bit_integers_or_refused() {
        let m: BTreeMap<String, Json> =
            serde_json::from_str(r#"{"a": 7, "b": -1, "c": "0x1"}"#).unwrap();
        let t = texts(&m).unwrap();
        assert_eq!(t["a"].0, "7");
        assert_eq!(t["b"].0, "-1");
        let m: BTreeMap<String, Json> =
            serde_json::from_str(r#"{"k": 123456789012345678901234567890}"#).unwrap();
        let e = texts(&m).unwrap_err();
        assert!(e.contains("at most 64 bits") && !e.contains("e+29"), "{e}");
        let m: BTreeMap<String, Json> = serde_json::from_str(r#"{"k": 1.5}"#).unwrap();
        assert!(texts(&m).is_err());
    }
}
