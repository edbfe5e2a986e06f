//! The table-state file as plain Rust data, read from YAML with serde.
//!
//! ```yaml
//! tables:
//!   - table: SwitchIngress.ipv4_lpm          # qualified, or bare when unambiguous
//!     clear: false                           # delete the table's entries first
//!     default: { action: drop }
//!     entries:
//!       - { key: { hdr.ipv4.dst_addr: "10.0.2.0/24" }, action: set_nexthop, params: { nexthop_id: 3 } }
//!       - { key: { ...ternary keys... }, priority: 10, action: acl_deny }   # smaller priority wins
//! registers:
//!   - { register: SwitchIngress.seen, index: 3, value: 1 }           # or lo/hi for pairs; pipe: N
//! mirror:
//!   - { session: 5, direction: ingress, port: 3, max_len: 128 }      # or mgid instead of port
//!   # with mgid: level1_mcast_hash / level2_mcast_hash, the PRE hashes of its copies (default 0)
//! multicast:
//!   nodes:  [ { id: 1, rid: 0, ports: [0, 1], lags: [] } ]
//!   groups: [ { mgid: 1, nodes: [1], xids: [0] } ]                 # xids: L1 exclusion ids
//!   prune:  [ { xid: 0, ports: [0] } ]                               # L2 exclusion (pruning)
//!   lags:   [ { id: 1, ports: [4, 5] } ]
//! ports:
//!   - { port: 0, rate_bps: 100000000000, queue_bytes: 1000000, ecn_kmin_bytes: 50000, ecn_kmax_bytes: 500000, ecn_pmax: 0.01 }
//!   - { port: 1, queues: 4, queue_map: [3, 2, 1, 0] }             # qid -> queue (egress_qid)
//! action_profiles:                            # members and (with a selector) groups
//!   - profile: SwitchIngress.ecmp_selector
//!     members: [ { id: 1, action: set_port, params: { port: 1 } } ]
//!     groups:  [ { id: 10, members: [1] } ]
//! # ...and a table implemented by the profile points its entries at them:
//! #   - { key: { hdr.ipv4.dst_addr: "10.0.0.0/8" }, group: 10 }     # or member: 1
//! meters:
//!   - { meter: SwitchIngress.meter, byte_count_adjust: -12 }       # or table: (direct); pipe: N
//!   - { meter: SwitchIngress.meter, index: 3, cir: 1000, cbs: 1500, pir: 2000, pbs: 3000 }
//! ```
//!
//! Keys, action parameters and register values are kept as the text the user wrote: their
//! widths and match kinds come from the program when the file is applied.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// A YAML scalar as written (numbers keep their spelling, so `0x0a` stays hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(s.to_string())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct TextVisitor;
        impl Visitor<'_> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value (number, address or match text)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(u8::from(v).to_string()))
            }
        }
        d.deserialize_str(TextVisitor)
    }
}

/// An item with the position (1-based line and column) it was read from; 0 when built in code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At<T> {
    pub item: T,
    pub line: u64,
    pub column: u64,
}

impl<T> At<T> {
    /// An item made in code (no file position).
    pub fn new(item: T) -> At<T> {
        At {
            item,
            line: 0,
            column: 0,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for At<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<At<T>, D::Error> {
        let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
        Ok(At {
            item: s.value,
            line: s.referenced.line(),
            column: s.referenced.column(),
        })
    }
}

/// A whole table-state file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TablesFile {
    #[serde(default)]
    pub tables: Vec<TableSection>,
    #[serde(default)]
    pub registers: Vec<At<RegisterWrite>>,
    #[serde(default)]
    pub mirror: Vec<At<MirrorSession>>,
    #[serde(default)]
    pub multicast: Multicast,
    #[serde(default)]
    pub ports: Vec<At<PortSettings>>,
    #[serde(default)]
    pub action_profiles: Vec<ProfileSection>,
    #[serde(default)]
    pub value_sets: Vec<ValueSetSection>,
    #[serde(default)]
    pub filters: Vec<At<FilterWrite>>,
    #[serde(default)]
    pub meters: Vec<At<MeterSettings>>,
}

/// One meter's settings: a meter by name (`meter`, indexed or direct) or a direct meter by its
/// table (`table`). Either or both of:
/// - `byte_count_adjust`: bytes added to every packet's length before a byte meter's update,
///   -8192..=8191, one value per meter (BfRt's `MeterByteCountAdjust`);
/// - one cell's rates, `cir`, `pir` (per second) and `cbs`, `pbs` (bursts), in the meter's unit
///   (bytes for a byte meter, packets for a packet meter): the cell is `index` of an indexed
///   meter, or a direct meter's cell by its table's entry (`table` + `key` [+ `priority`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterSettings {
    #[serde(default)]
    pub meter: Option<String>,
    #[serde(default)]
    pub table: Option<String>,
    #[serde(default)]
    pub byte_count_adjust: Option<i32>,
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub key: BTreeMap<String, Text>,
    #[serde(default)]
    pub priority: Option<u32>,
    #[serde(default)]
    pub cir: Option<u64>,
    #[serde(default)]
    pub pir: Option<u64>,
    #[serde(default)]
    pub cbs: Option<u64>,
    #[serde(default)]
    pub pbs: Option<u64>,
    /// One pipe only; every pipe when omitted.
    #[serde(default)]
    pub pipe: Option<u16>,
}

/// The entries of one parser value set.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueSetSection {
    pub value_set: At<String>,
    /// Delete the set's current entries before adding these.
    #[serde(default)]
    pub clear: bool,
    #[serde(default)]
    pub entries: Vec<At<ValueSetItem>>,
}

/// A value set entry: one match text for a one-field set (`4789`, `0x12b0 &&& 0xfff0`), or
/// a match text per field by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueSetItem {
    One(Text),
    Fields(BTreeMap<String, Text>),
}

impl<'de> Deserialize<'de> for ValueSetItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ValueSetItem, D::Error> {
        struct ItemVisitor;
        impl<'de> Visitor<'de> for ItemVisitor {
            type Value = ValueSetItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a match text, or a map of field name to match text")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ValueSetItem, E> {
                Ok(ValueSetItem::One(Text(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ValueSetItem, E> {
                Ok(ValueSetItem::One(Text(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ValueSetItem, E> {
                Ok(ValueSetItem::One(Text(v.to_string())))
            }
            /// A scalar the YAML reader took for a float: a fraction, or an integer past 64
            /// bits it has already rounded. Refused (the reader adds the position): quoted or
            /// in hex it is read as written.
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ValueSetItem, E> {
                Err(E::custom(
                    "not a 64-bit integer: a value wider than 64 bits is read exactly only \
                     quoted (\"18446744073709551616\") or in hex (0x10000000000000000)",
                ))
            }
            fn visit_map<M: de::MapAccess<'de>>(self, mut m: M) -> Result<ValueSetItem, M::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, Text>()? {
                    out.insert(k, v);
                }
                Ok(ValueSetItem::Fields(out))
            }
        }
        d.deserialize_any(ItemVisitor)
    }
}

/// The members and groups of one action profile (or selector).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSection {
    pub profile: At<String>,
    #[serde(default)]
    pub members: Vec<At<Member>>,
    #[serde(default)]
    pub groups: Vec<At<Group>>,
}

/// A member: an id, an action and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub id: u32,
    pub action: String,
    #[serde(default)]
    pub params: BTreeMap<String, Text>,
}

/// A selector group: an id and its members.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub id: u32,
    #[serde(default)]
    pub members: Vec<u32>,
}

/// The entries and default action of one table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSection {
    pub table: At<String>,
    /// Delete the table's current entries before adding these.
    #[serde(default)]
    pub clear: bool,
    #[serde(default)]
    pub default: Option<At<ActionSpec>>,
    #[serde(default)]
    pub entries: Vec<At<Entry>>,
}

/// An action with its parameters by name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    pub action: String,
    #[serde(default)]
    pub params: BTreeMap<String, Text>,
}

/// One table entry: match fields by key name (omitted ternary/lpm/range keys match anything).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    #[serde(default)]
    pub key: BTreeMap<String, Text>,
    /// BfRt `$MATCH_PRIORITY`: a smaller number wins; required for ternary/range tables.
    #[serde(default)]
    pub priority: Option<u32>,
    /// The action; or, in a table with an action profile, `member` or `group` instead.
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub params: BTreeMap<String, Text>,
    #[serde(default)]
    pub member: Option<u32>,
    #[serde(default)]
    pub group: Option<u32>,
    /// BfRt `$ENTRY_TTL` (P4Runtime `idle_timeout_ns`), in ms, for a table declared with
    /// `idle_timeout = true`: the entry counts as idle once it has not been hit for this long
    /// (`pisa ctl table-list` shows each entry's idle time). 0 or absent: it never ages.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
}

/// A register cell write: `value` for a scalar register, `lo`/`hi` for a pair.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterWrite {
    pub register: String,
    pub index: u32,
    #[serde(default)]
    pub value: Option<Text>,
    #[serde(default)]
    pub lo: Option<Text>,
    #[serde(default)]
    pub hi: Option<Text>,
    /// One pipe only; every pipe when omitted.
    #[serde(default)]
    pub pipe: Option<u16>,
}

/// One LPF or WRED cell's spec: an indexed filter's cell (`filter` + `index`), or a direct
/// filter's cell by its table's entry (`table` + `key` [+ `priority`]). LPF fields: `type`
/// (`rate` or `sample`), `gain_ns`, `decay_ns` (one alone sets both), `scale_down`; WRED fields:
/// `time_constant_ns`, `min_thresh`, `max_thresh`, `max_probability`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterWrite {
    #[serde(default)]
    pub filter: Option<String>,
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub table: Option<String>,
    #[serde(default)]
    pub key: BTreeMap<String, Text>,
    #[serde(default)]
    pub priority: Option<u32>,
    #[serde(default, rename = "type")]
    pub lpf_type: Option<LpfType>,
    #[serde(default)]
    pub gain_ns: Option<u64>,
    #[serde(default)]
    pub decay_ns: Option<u64>,
    #[serde(default)]
    pub scale_down: Option<u8>,
    #[serde(default)]
    pub time_constant_ns: Option<u64>,
    #[serde(default)]
    pub min_thresh: Option<u32>,
    #[serde(default)]
    pub max_thresh: Option<u32>,
    #[serde(default)]
    pub max_probability: Option<f64>,
}

/// How an LPF combines samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LpfType {
    Rate,
    Sample,
}

/// Which traffic a mirror session's direction names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MirrorDirection {
    Ingress,
    Egress,
    Both,
}

/// A mirror session: its destination is a port or a multicast group.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MirrorSession {
    pub session: u16,
    #[serde(default = "both")]
    pub direction: MirrorDirection,
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub mgid: Option<u16>,
    /// Truncate mirrored copies to this many bytes.
    #[serde(default)]
    pub max_len: Option<u16>,
    /// The PRE hashes of a multicast session's copies (default 0; a copy does not take the
    /// packet's `level1/2_mcast_hash`).
    #[serde(default)]
    pub level1_mcast_hash: u16,
    #[serde(default)]
    pub level2_mcast_hash: u16,
}

fn both() -> MirrorDirection {
    MirrorDirection::Both
}

/// The packet replication engine's tables.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Multicast {
    #[serde(default)]
    pub nodes: Vec<At<McNode>>,
    #[serde(default)]
    pub groups: Vec<At<McGroup>>,
    #[serde(default)]
    pub prune: Vec<At<Prune>>,
    #[serde(default)]
    pub lags: Vec<At<Lag>>,
}

/// An L1 node: a RID and the ports (and LAGs) its copies go to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McNode {
    pub id: u32,
    pub rid: u16,
    #[serde(default)]
    pub ports: Vec<u16>,
    #[serde(default)]
    pub lags: Vec<u8>,
}

/// A multicast group: L1 nodes, each optionally with an L1 exclusion id (`xids`, same order).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McGroup {
    pub mgid: u16,
    #[serde(default)]
    pub nodes: Vec<u32>,
    #[serde(default)]
    pub xids: Option<Vec<u16>>,
}

/// An L2 exclusion id and the ports it prunes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prune {
    pub xid: u16,
    pub ports: Vec<u16>,
}

/// A LAG and its member ports.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lag {
    pub id: u8,
    pub ports: Vec<u16>,
}

/// Per-port traffic-manager settings (fields left out keep the switch's configuration).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSettings {
    pub port: u16,
    /// Port rate in bits per second.
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// Queue capacity in bytes (tail drop beyond it).
    #[serde(default)]
    pub queue_bytes: Option<u64>,
    /// ECN marking (DCQCN's RED-like curve): no mark up to Kmin bytes of backlog, probability
    /// rising to `ecn_pmax` at Kmax, always above it.
    #[serde(default)]
    pub ecn_kmin_bytes: Option<u64>,
    #[serde(default)]
    pub ecn_kmax_bytes: Option<u64>,
    /// Defaults to 1.0 when Kmin and Kmax are given.
    #[serde(default)]
    pub ecn_pmax: Option<f64>,
    /// The port's entry in the port metadata table (bf-rt's `$PORT_METADATA`): the phase-0
    /// word the ingress parser reads after the intrinsic metadata (`port_metadata_unpack`),
    /// most significant byte first: 64 bits on Tofino 1, 128 on Tofino 2.
    #[serde(default)]
    pub port_metadata: Option<u128>,
    /// The port's queue count (the SDE's `bf_tm_port_q_mapping_set`; the driver's default is
    /// 8 on Tofino 1, 16 on Tofino 2).
    #[serde(default)]
    pub queues: Option<u16>,
    /// `queue_map[qid]`: the queue of `ig_intr_tm_md.qid` (`eg_intr_md.egress_qid` reads it);
    /// qids past its end take `qid % queues`. Needs `queues`.
    #[serde(default)]
    pub queue_map: Option<Vec<u16>>,
}
