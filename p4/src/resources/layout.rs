//! What the source tells the placement about tables beyond the IR ([`Hints`]):
//!
//! - memory layouts a program asks bf-p4c for (`implementation = Alpm(...)` / `Atcam(...)`):
//!   the table matches the same, but its entries live in an algorithmic TCAM (ATCAM), whose
//!   partitions are kept in SRAM match words, and for ALPM a pre-classifier TCAM picks the
//!   partition. The resource check sizes such a table from its layout instead of as a TCAM;
//! - `@pack(n)` / `@ways(n)` ([`Sizing`]): an exact table's entries per match row and its
//!   number of hash ways, fixed instead of chosen (mau/table_layout.cpp
//!   `get_pack_pragma_val`, mau/resource_estimate.cpp `ways_provided`); `@use_hash_action(n)`:
//!   the hash-action layout forced (1) or ruled out (0) (mau/table_layout.cpp
//!   `add_hash_action_option`); `@entries_with_ranges(n)`: how many of a range table's entries
//!   hold ranges, each taking several TCAM lines (mau/resource_estimate.cpp `RangeEntries`);
//! - `@ignore_table_dependency("other")`: the data dependencies between the two tables are
//!   dropped, as bf-p4c drops them (mau/table_mutex.cpp `IgnoreTableDeps`);
//! - `@stage(n)` ([`StagePin`]) and `@placement_priority("other", ...)`: where a table starts
//!   and which tables it goes before (see [`super::pins`] for bf-p4c's rules and pisa's).

use pipeline::ir::TableId;

/// The layout of one ALPM or ATCAM table, as its extern's constructor gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtcamLayout {
    /// `number_partitions`.
    pub partitions: u32,
    /// ALPM's `subtrees_per_partition` (the pre-classifier holds `partitions × subtrees`
    /// entries); `None` for a plain `Atcam`, whose partition index the program computes.
    pub subtrees: Option<u32>,
    /// ALPM's `atcam_subset_width`: how many bits of the prefix key each ATCAM entry stores
    /// (the pre-classifier matches the rest); `None`: the whole key.
    pub subset_width: Option<u32>,
    /// ALPM's `shift_granularity`: the pre-classifier has one action per shift of the subset
    /// window; `None`: the lpm key's width (a single action).
    pub shift_granularity: Option<u32>,
}

/// bf-p4c's defaults for an `Alpm()` / `Atcam()` without arguments.
pub const DEFAULT_PARTITIONS: u32 = 1024;
pub const DEFAULT_SUBTREES: u32 = 2;

/// The layouts of one pipeline's tables (most tables have none).
pub type TableLayouts = Vec<(TableId, AtcamLayout)>;

/// bf-p4c's bounds of `@pack` (Tofino: `sramMinPackEntries` / `sramMaxPackEntries`) and
/// `@ways` (`StageUseEstimate::MIN_WAYS` / `MAX_WAYS`).
pub const PACK_RANGE: std::ops::RangeInclusive<u32> = 1..=9;
pub const WAYS_RANGE: std::ops::RangeInclusive<u32> = 1..=8;

/// bf-p4c's bounds of `@simul_lookups` (mau/table_layout.cpp `simul_lookups_pragma`:
/// `MIN_WAYS` to `MAX_WAYS + 2`).
pub const SIMUL_LOOKUPS_RANGE: std::ops::RangeInclusive<u32> = 1..=10;

/// bf-p4c's values of `@use_hash_action` (mau/table_layout.cpp `add_hash_action_option`).
pub const HASH_ACTION_RANGE: std::ops::RangeInclusive<u32> = 0..=1;

/// A table's `@pack(n)`, `@ways(n)`, `@use_hash_action(n)`, `@placement_priority(n)` and
/// `@entries_with_ranges(n)`, each within its range (values outside are warned about and
/// dropped by the lowering).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizing {
    /// Entries per match row: the only layout bf-p4c then tries.
    pub pack: Option<u32>,
    /// Hash ways: the table's RAMs are cut into this many ways.
    pub ways: Option<u32>,
    /// `@simul_lookups(n)`: n simultaneous lookups cut the RAMs as `@ways(n)` would, but may
    /// share hash bits (bf-p4c `StageUseEstimate::ways_provided`; `@ways` wins when both).
    pub simul_lookups: Option<u32>,
    /// `@use_hash_action(1)`: the hash-action layout only (no match RAMs; bf-p4c refuses the
    /// table when it cannot be one); `(0)`: never that layout, even where it would be chosen.
    pub hash_action: Option<bool>,
    /// `@placement_priority(n)`: of the tables that can start in one stage, bf-p4c places the
    /// higher priority first (mau/table_placement.cpp `is_better`, before the dependency
    /// chain; default 0). Its other form, table names to place before, is
    /// [`Hints::priority_over`].
    pub priority: Option<i32>,
    /// `@entries_with_ranges(n)`: of a table with `range` keys, the entries that hold ranges
    /// (each takes several TCAM lines); without it bf-p4c assumes a quarter of its size.
    pub entries_with_ranges: Option<u32>,
}

impl Sizing {
    /// The annotations a [`Sizing`] comes from, with the values bf-p4c accepts.
    pub const ANNOTATIONS: [(&'static str, std::ops::RangeInclusive<i128>); 6] = [
        (
            "pack",
            *PACK_RANGE.start() as i128..=*PACK_RANGE.end() as i128,
        ),
        (
            "ways",
            *WAYS_RANGE.start() as i128..=*WAYS_RANGE.end() as i128,
        ),
        (
            "simul_lookups",
            *SIMUL_LOOKUPS_RANGE.start() as i128..=*SIMUL_LOOKUPS_RANGE.end() as i128,
        ),
        (
            "use_hash_action",
            *HASH_ACTION_RANGE.start() as i128..=*HASH_ACTION_RANGE.end() as i128,
        ),
        ("placement_priority", i32::MIN as i128..=i32::MAX as i128),
        // bf-p4c ignores a value of 0 or less with a warning.
        ("entries_with_ranges", 1..=i32::MAX as i128),
    ];

    /// Records annotation `which` (one of [`Self::ANNOTATIONS`]) with value `n`, in range.
    pub fn set(&mut self, which: &str, n: i128) {
        match which {
            "pack" => self.pack = u32::try_from(n).ok(),
            "ways" => self.ways = u32::try_from(n).ok(),
            "simul_lookups" => self.simul_lookups = u32::try_from(n).ok(),
            "use_hash_action" => self.hash_action = Some(n == 1),
            "placement_priority" => self.priority = i32::try_from(n).ok(),
            "entries_with_ranges" => self.entries_with_ranges = u32::try_from(n).ok(),
            _ => {}
        }
    }
}

/// `@ignore_table_dependency("other")` on a table, or on the control that declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IgnoreDep {
    pub table: TableId,
    /// The other table's name as written: its control-qualified name, or its `@name`.
    pub other: String,
    /// Written on the enclosing control declaration rather than the table.
    pub on_control: bool,
}

/// `@stage(stage [, entries] [, "flag"])` on a table: bf-p4c's stage pragma (its help text,
/// common/pragma/all_pragmas.cpp `PragmaStage`: "the associated match table must be placed in
/// the indicated stage"; a table may carry several, each with its own number of entries).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePin {
    pub table: TableId,
    /// The stage asked for.
    pub stage: u32,
    /// The number of the table's entries to place in that stage, when given.
    pub entries: Option<u32>,
}

/// The hints of one pipeline's tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    pub layouts: TableLayouts,
    pub ignore_deps: Vec<IgnoreDep>,
    /// Tables renamed by `@name`, with the control-qualified name they are declared under
    /// (`@ignore_table_dependency` may name either, like bf-p4c's internal and external
    /// names).
    pub declared_names: Vec<(TableId, String)>,
    /// Tables with `@pack` or `@ways`.
    pub sizing: Vec<(TableId, Sizing)>,
    /// `@stage(...)` annotations, in source order.
    pub stage_pins: Vec<StagePin>,
    /// `@placement_priority("other")`: the table goes before the table named `other` among
    /// those that can start in one stage (the name as written, resolved like
    /// `@ignore_table_dependency`'s).
    pub priority_over: Vec<(TableId, String)>,
    /// bf-p4c's `--disable-parse-depth-limit` (a compile option, the same for every pipeline):
    /// the Tofino 1 egress parse depth limit warns instead of failing.
    pub disable_parse_depth_limit: bool,
}
