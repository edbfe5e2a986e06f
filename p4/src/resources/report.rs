//! The placement report: per pipeline and gress, what sits in each MAU stage and how much of
//! the stage it uses. Printed by `pisa check` (`Display`) or as JSON (`--report json`).

use std::fmt;

use serde::Serialize;

/// Usage of one MAU stage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StageReport {
    pub stage: u32,
    /// Tables (and `tbl_act`-like statement groups, labelled by their first statement).
    pub tables: Vec<String>,
    /// Gateways, as `if (condition)`.
    pub gateways: Vec<String>,
    /// Registers, meters and counters living in this stage.
    pub registers: Vec<String>,
    /// Why units sit here rather than earlier: `unit: after|with other (kind dependency on
    /// field)`, with bf-p4c's dependency kinds (match, action and output dependencies need a
    /// later stage; control and anti ones allow the same stage), or the resource that ran out.
    pub placed_by: Vec<String>,
    pub logical_tables: u32,
    pub stateful_alus: u32,
    pub stats_alus: u32,
    pub hash_bits: u32,
    pub sram_blocks: u32,
    pub tcam_blocks: u32,
    pub exact_xbar_bytes: u32,
    pub ternary_xbar_bytes: u32,
}

/// Sums over the stages of one gress.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub tables: u32,
    pub gateways: u32,
    pub registers: u32,
    pub stateful_alus: u32,
    pub hash_bits: u32,
    pub sram_blocks: u32,
    pub tcam_blocks: u32,
}

/// A lower bound on the PHV bits one gress needs: the header fields its fullest parse path
/// holds at the end of parsing (see the resource check's PHV rule).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PhvUse {
    /// Container bits the parser fills on that path, at least.
    pub bits: u32,
    /// Bits of fields the MAU reads, on the path where they are most.
    pub mau_bits: u32,
    /// The parse path of `bits`, state by state from `start`.
    pub path: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GressReport {
    /// `ingress` or `egress`.
    pub gress: String,
    pub stages_used: u32,
    pub phv: PhvUse,
    pub stages: Vec<StageReport>,
    pub totals: Totals,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PipelineReport {
    pub name: String,
    pub gresses: Vec<GressReport>,
}

/// Stage-by-stage resource use of a placed program.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub target: String,
    pub stages_per_gress: u32,
    /// Per-stage capacities, for reading the numbers.
    pub capacity: Capacity,
    pub pipelines: Vec<PipelineReport>,
}

/// What one stage of the target offers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Capacity {
    pub logical_tables: u32,
    pub stateful_alus: u32,
    pub hash_bits: u32,
    pub sram_blocks: u32,
    pub tcam_blocks: u32,
    pub exact_xbar_bytes: u32,
    pub ternary_xbar_bytes: u32,
    /// PHV container bits a parser can fill, both gresses together (not per stage).
    pub phv_bits: u32,
}

impl Report {
    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serializing plain strings and integers cannot fail; fall back to an empty object.
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }

    /// The report of `gress` (`"ingress"`/`"egress"`) of pipeline `pipeline`, if present.
    pub fn gress(&self, pipeline: usize, gress: &str) -> Option<&GressReport> {
        self.pipelines
            .get(pipeline)?
            .gresses
            .iter()
            .find(|g| g.gress == gress)
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.capacity;
        writeln!(
            f,
            "target {} ({} stages per gress)",
            self.target, self.stages_per_gress
        )?;
        for p in &self.pipelines {
            for g in &p.gresses {
                writeln!(f)?;
                writeln!(
                    f,
                    "pipeline `{}`, {}: stages used: {} of {}",
                    p.name, g.gress, g.stages_used, self.stages_per_gress
                )?;
                if g.phv.bits > 0 {
                    writeln!(
                        f,
                        "  PHV: at least {} of {} bits, on parse path {} (fields the MAU reads: at least {} bits)",
                        g.phv.bits,
                        c.phv_bits,
                        truncate(&g.phv.path.join(" → "), 120),
                        g.phv.mau_bits
                    )?;
                }
                if g.stages.is_empty() {
                    continue;
                }
                let header = [
                    "stage".to_string(),
                    format!("tables/{}", c.logical_tables),
                    "gateways".into(),
                    format!("SALUs/{}", c.stateful_alus),
                    "stats ALUs".into(),
                    format!("hash bits/{}", c.hash_bits),
                    format!("SRAM/{}", c.sram_blocks),
                    format!("TCAM/{}", c.tcam_blocks),
                    format!("xbar B/{}+{}", c.exact_xbar_bytes, c.ternary_xbar_bytes),
                ];
                let mut rows: Vec<[String; 9]> = vec![header];
                for s in &g.stages {
                    rows.push([
                        s.stage.to_string(),
                        s.logical_tables.to_string(),
                        s.gateways.len().to_string(),
                        s.stateful_alus.to_string(),
                        s.stats_alus.to_string(),
                        s.hash_bits.to_string(),
                        s.sram_blocks.to_string(),
                        s.tcam_blocks.to_string(),
                        format!("{}+{}", s.exact_xbar_bytes, s.ternary_xbar_bytes),
                    ]);
                }
                let t = &g.totals;
                rows.push([
                    "total".into(),
                    t.tables.to_string(),
                    t.gateways.to_string(),
                    t.stateful_alus.to_string(),
                    String::new(),
                    t.hash_bits.to_string(),
                    t.sram_blocks.to_string(),
                    t.tcam_blocks.to_string(),
                    String::new(),
                ]);
                let mut widths = [0usize; 9];
                for r in &rows {
                    for (i, cell) in r.iter().enumerate() {
                        widths[i] = widths[i].max(cell.chars().count());
                    }
                }
                for r in &rows {
                    let cells: Vec<String> = r
                        .iter()
                        .enumerate()
                        .map(|(i, cell)| format!("{cell:>w$}", w = widths[i]))
                        .collect();
                    writeln!(f, "  {}", cells.join(" | "))?;
                }
                for s in &g.stages {
                    writeln!(f, "  stage {}:", s.stage)?;
                    if !s.tables.is_empty() {
                        writeln!(f, "    tables:    {}", truncate(&list(&s.tables), 200))?;
                    }
                    if !s.gateways.is_empty() {
                        writeln!(f, "    gateways:  {}", truncate(&list(&s.gateways), 200))?;
                    }
                    if !s.registers.is_empty() {
                        writeln!(f, "    stateful:  {}", truncate(&list(&s.registers), 200))?;
                    }
                    for r in &s.placed_by {
                        writeln!(f, "    placed:    {}", truncate(r, 200))?;
                    }
                }
            }
        }
        Ok(())
    }
}
