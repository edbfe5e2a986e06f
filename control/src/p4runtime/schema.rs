//! The id → name view of a P4Info the server answers requests with: tables with their match
//! fields, actions with their parameters, counters, registers, controller headers. Names are
//! what pisa's runtime API takes, so every request becomes a runtime-API call by name.

use std::collections::BTreeMap;

use pipeline::ir::MatchKind;

use super::proto::p4::config::v1 as pi;

/// A match field of a table.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub id: u32,
    pub name: String,
    pub width: u16,
    pub kind: MatchKind,
}

/// A table as the server sees it.
#[derive(Debug, Clone)]
pub struct TableInfo {
    pub id: u32,
    pub name: String,
    pub fields: Vec<FieldInfo>,
    /// Action id → scope (`pi::action_ref::Scope`).
    pub actions: BTreeMap<u32, i32>,
    pub is_const: bool,
    pub const_default: bool,
    pub direct_counter: Option<u32>,
    pub has_profile: bool,
    /// Entries carry idle timeouts (P4Info `NOTIFY_CONTROL`).
    pub idle: bool,
}

impl TableInfo {
    /// Whether entries carry a priority (a ternary or range field, or several lpm fields).
    pub fn needs_priority(&self) -> bool {
        self.fields
            .iter()
            .any(|f| matches!(f.kind, MatchKind::Ternary | MatchKind::Range))
            || self
                .fields
                .iter()
                .filter(|f| f.kind == MatchKind::Lpm)
                .count()
                > 1
    }
}

/// An action parameter.
#[derive(Debug, Clone)]
pub struct ParamInfo {
    pub id: u32,
    pub name: String,
    pub width: u16,
}

#[derive(Debug, Clone)]
pub struct ActionInfo {
    pub id: u32,
    pub name: String,
    pub params: Vec<ParamInfo>,
}

/// An indexed object (counter, register): name and size.
#[derive(Debug, Clone)]
pub struct IndexedInfo {
    pub id: u32,
    pub name: String,
    pub size: u32,
    /// Registers: the width of a word, and whether a cell is a pair of words.
    pub width: u16,
    pub paired: bool,
}

/// An action profile (or selector): its name and the tables it implements.
#[derive(Debug, Clone)]
pub struct ProfileInfo {
    pub id: u32,
    pub name: String,
    pub tables: Vec<u32>,
    pub with_selector: bool,
    /// The most members a group may have (P4Info `max_group_size`; 0: no limit given).
    pub max_group_size: u32,
}

/// A parser value set: its fields (as match fields) and how many members it holds.
#[derive(Debug, Clone)]
pub struct ValueSetInfo {
    pub id: u32,
    pub name: String,
    pub fields: Vec<FieldInfo>,
    pub size: u32,
}

/// A controller header's metadata fields (id, name, width), in header order.
#[derive(Debug, Clone, Default)]
pub struct HeaderInfo {
    pub id: u32,
    pub fields: Vec<(u32, String, u16)>,
}

/// Every id of a P4Info.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub tables: BTreeMap<u32, TableInfo>,
    pub actions: BTreeMap<u32, ActionInfo>,
    /// Action name → id.
    pub action_ids: BTreeMap<String, u32>,
    pub counters: BTreeMap<u32, IndexedInfo>,
    /// Direct counter id → table id.
    pub direct_counters: BTreeMap<u32, u32>,
    pub registers: BTreeMap<u32, IndexedInfo>,
    pub meters: BTreeMap<u32, IndexedInfo>,
    /// Direct meter id → table id.
    pub direct_meters: BTreeMap<u32, u32>,
    pub profiles: BTreeMap<u32, ProfileInfo>,
    pub value_sets: BTreeMap<u32, ValueSetInfo>,
    /// Digest id → name.
    pub digests: BTreeMap<u32, String>,
    pub packet_in: Option<HeaderInfo>,
    pub packet_out: Option<HeaderInfo>,
}

fn name_of(p: &Option<pi::Preamble>) -> (u32, String) {
    p.as_ref()
        .map_or((0, String::new()), |p| (p.id, p.name.clone()))
}

fn kind_of(m: &pi::MatchField) -> MatchKind {
    use pi::match_field::{Match, MatchType};
    match m.r#match {
        Some(Match::MatchType(t)) => match MatchType::try_from(t) {
            Ok(MatchType::Exact) => MatchKind::Exact,
            Ok(MatchType::Lpm) => MatchKind::Lpm,
            Ok(MatchType::Ternary) => MatchKind::Ternary,
            Ok(MatchType::Range) => MatchKind::Range,
            _ => MatchKind::Selector,
        },
        _ => MatchKind::Selector,
    }
}

/// Match fields (of a table or a value set) as the server checks requests against them.
fn fields_of(m: &[pi::MatchField]) -> Vec<FieldInfo> {
    m.iter()
        .map(|m| FieldInfo {
            id: m.id,
            name: m.name.clone(),
            width: width(m.bitwidth),
            kind: kind_of(m),
        })
        .collect()
}

fn width(w: i32) -> u16 {
    u16::try_from(w).unwrap_or(0)
}

impl Schema {
    pub fn new(info: &pi::P4Info) -> Schema {
        let mut s = Schema::default();
        for t in &info.tables {
            let (id, name) = name_of(&t.preamble);
            let fields = fields_of(&t.match_fields);
            let direct_counter = info.direct_counters.iter().find_map(|d| {
                let (did, _) = name_of(&d.preamble);
                (d.direct_table_id == id).then_some(did)
            });
            s.tables.insert(
                id,
                TableInfo {
                    id,
                    name,
                    fields,
                    actions: t.action_refs.iter().map(|a| (a.id, a.scope)).collect(),
                    is_const: t.is_const_table,
                    const_default: t.const_default_action_id != 0,
                    direct_counter,
                    has_profile: t.implementation_id != 0,
                    idle: t.idle_timeout_behavior
                        == pi::table::IdleTimeoutBehavior::NotifyControl as i32,
                },
            );
        }
        for a in &info.actions {
            let (id, name) = name_of(&a.preamble);
            let params = a
                .params
                .iter()
                .map(|p| ParamInfo {
                    id: p.id,
                    name: p.name.clone(),
                    width: width(p.bitwidth),
                })
                .collect();
            s.action_ids.insert(name.clone(), id);
            s.actions.insert(id, ActionInfo { id, name, params });
        }
        for c in &info.counters {
            let (id, name) = name_of(&c.preamble);
            let size = u32::try_from(c.size).unwrap_or(0);
            s.counters.insert(
                id,
                IndexedInfo {
                    id,
                    name,
                    size,
                    width: 64,
                    paired: false,
                },
            );
        }
        for d in &info.direct_counters {
            let (id, _) = name_of(&d.preamble);
            s.direct_counters.insert(id, d.direct_table_id);
        }
        for r in &info.registers {
            let (id, name) = name_of(&r.preamble);
            let (w, paired) = register_width(r.type_spec.as_ref());
            s.registers.insert(
                id,
                IndexedInfo {
                    id,
                    name,
                    size: u32::try_from(r.size).unwrap_or(0),
                    width: w,
                    paired,
                },
            );
        }
        for m in &info.meters {
            let (id, name) = name_of(&m.preamble);
            s.meters.insert(
                id,
                IndexedInfo {
                    id,
                    name,
                    size: u32::try_from(m.size).unwrap_or(0),
                    width: 0,
                    paired: false,
                },
            );
        }
        for d in &info.direct_meters {
            let (id, _) = name_of(&d.preamble);
            s.direct_meters.insert(id, d.direct_table_id);
        }
        for v in &info.value_sets {
            let (id, name) = name_of(&v.preamble);
            let fields = fields_of(&v.r#match);
            let size = u32::try_from(v.size).unwrap_or(0);
            s.value_sets.insert(
                id,
                ValueSetInfo {
                    id,
                    name,
                    fields,
                    size,
                },
            );
        }
        for d in &info.digests {
            let (id, name) = name_of(&d.preamble);
            s.digests.insert(id, name);
        }
        for a in &info.action_profiles {
            let (id, name) = name_of(&a.preamble);
            s.profiles.insert(
                id,
                ProfileInfo {
                    id,
                    name,
                    tables: a.table_ids.clone(),
                    with_selector: a.with_selector,
                    max_group_size: u32::try_from(a.max_group_size).unwrap_or(0),
                },
            );
        }
        for h in &info.controller_packet_metadata {
            let (id, name) = name_of(&h.preamble);
            let hi = HeaderInfo {
                id,
                fields: h
                    .metadata
                    .iter()
                    .map(|m| (m.id, m.name.clone(), width(m.bitwidth)))
                    .collect(),
            };
            match name.as_str() {
                "packet_in" => s.packet_in = Some(hi),
                "packet_out" => s.packet_out = Some(hi),
                _ => {}
            }
        }
        s
    }
}

impl Schema {
    /// The digest id of a digest the switch emitted under its IR name (a P4Info name is that
    /// name, or that name qualified by its pipeline).
    pub fn digest_id(&self, ir_name: &str) -> Option<u32> {
        self.digests.iter().find_map(|(id, n)| {
            let hit = n == ir_name
                || n.strip_suffix(ir_name)
                    .is_some_and(|pre| pre.ends_with('.'));
            hit.then_some(*id)
        })
    }
}

fn register_width(t: Option<&pi::P4DataTypeSpec>) -> (u16, bool) {
    use pi::p4_bitstring_like_type_spec::TypeSpec as B;
    use pi::p4_data_type_spec::TypeSpec as D;
    let bit = |b: &pi::P4BitstringLikeTypeSpec| match &b.type_spec {
        Some(B::Bit(x)) => width(x.bitwidth),
        Some(B::Int(x)) => width(x.bitwidth),
        _ => 0,
    };
    match t.and_then(|t| t.type_spec.as_ref()) {
        Some(D::Bitstring(b)) => (bit(b), false),
        Some(D::Tuple(tu)) => match tu.members.first().and_then(|m| m.type_spec.as_ref()) {
            Some(D::Bitstring(b)) => (bit(b), true),
            _ => (0, true),
        },
        _ => (0, false),
    }
}
