//! Run-time adds stop at the table's P4 `size`, not at the memory bf-p4c allocates for it.
//!
//! bf-p4c rounds a table's memory up to whole RAMs and TCAMs (an exact table of 100 entries
//! gets four hash ways of 1024-entry RAMs, a ternary one a 512-line TCAM), but writes the P4
//! `size` into the context.json's `size` (`p4: { ..., size: N }` in its assembly, taken as the
//! table's `explicit_size` by the assembler), and the driver caps adds there: pipe_mgr's exact
//! match manager sets `num_entries` from it and calls the table full at that many entries
//! placed (growing it by one where it reserves an entry for the default action), its TCAM
//! manager keeps it as `tbl_size_max` ("the actual tbl size specified in P4"). pisa's tables
//! take exactly `size` entries too; these tests hold it there.

use std::sync::Arc;

use p4::compile::{compile_str, CompileOptions};
use pipeline::api::{ApiError, PipeSel};
use pipeline::ir::KeyMatch;
use pipeline::switch::{Switch, SwitchConfig};

const PROGRAM: &str = r#"
#include <core.p4>
#include <tna.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { bit<16> x; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {
  state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.eth); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md, inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
  action set(bit<16> v) { meta.x = v; }
  table exact_t { key = { hdr.eth.type : exact; } actions = { set; NoAction; } size = 100; }
  table ternary_t { key = { hdr.eth.dst : ternary; } actions = { set; NoAction; } size = 100; }
  apply { exact_t.apply(); ternary_t.apply(); ig_tm_md.ucast_egress_port = (bit<9>)meta.x; }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t meta, in ingress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out meta_t meta, out egress_intrinsic_metadata_t eg_intr_md) { state start { pkt.extract(eg_intr_md); transition accept; } }
control Eg(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md, in egress_intrinsic_metadata_from_parser_t a, inout egress_intrinsic_metadata_for_deparser_t b, inout egress_intrinsic_metadata_for_output_port_t c) { apply { } }
control ED(packet_out pkt, inout headers_t hdr, in meta_t meta, in egress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
"#;

/// Adds entries `0..n` to `table` (exact or ternary on its key), returning the first refusal.
fn fill(
    sw: &mut Switch,
    table: &str,
    key: &str,
    ternary: bool,
    n: u128,
) -> Option<(u128, ApiError)> {
    for i in 0..n {
        let m = if ternary {
            KeyMatch::Ternary {
                value: i,
                mask: u128::from(u64::MAX >> 16),
            }
        } else {
            KeyMatch::Exact(i)
        };
        let priority = ternary.then_some(1);
        if let Err(e) = sw.table_add(
            PipeSel::All,
            table,
            &[(key, m)],
            priority,
            "set",
            &[("v", 1)],
        ) {
            return Some((i, e));
        }
    }
    None
}

#[test]
fn adds_stop_at_the_p4_size_not_the_allocated_memory() {
    let c = compile_str("capacity.p4", PROGRAM, &CompileOptions::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    // The memory behind the tables holds far more than 100 entries: at least one 1024-entry
    // RAM per hash way (4) for the exact table, a 512-line TCAM for the ternary one.
    let report = c.resources.as_ref().expect("report");
    let g = report.gress(0, "ingress").expect("ingress");
    assert!(g.totals.sram_blocks >= 4, "{}", report);
    assert!(g.totals.tcam_blocks >= 1, "{}", report);
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    for (table, key, ternary) in [
        ("Ing.exact_t", "hdr.eth.type", false),
        ("Ing.ternary_t", "hdr.eth.dst", true),
    ] {
        match fill(&mut sw, table, key, ternary, 101) {
            Some((100, ApiError::TableFull { capacity, .. })) => assert_eq!(capacity, 100),
            other => panic!("{table}: the 101st add should be refused as full: {other:?}"),
        }
    }
}

/// A table without `size` gets bf-p4c's default before the control plane is generated
/// (`SetDefaultSize`: 512, or the table's `min_size`), with bf-p4c's warning (none for an
/// `@hidden` table): the program's table size, so P4Info's and the driver's cap, is that.
#[test]
fn a_table_without_a_size_gets_bf_p4cs_default() {
    let src = PROGRAM
        .replace(
            "actions = { set; NoAction; } size = 100; }\n  table ternary_t",
            "actions = { set; NoAction; } }\n  table ternary_t",
        )
        .replace(
            "actions = { set; NoAction; } size = 100; }\n  apply",
            "actions = { set; NoAction; } min_size = 40; }\n  @hidden table h_t { actions = { NoAction; } }\n  apply",
        )
        .replace("apply { exact_t.apply();", "apply { h_t.apply(); exact_t.apply();");
    let c = compile_str("default_size.p4", &src, &CompileOptions::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let w = c.warnings.render(&c.sources);
    assert!(
        w.contains("No size defined for table 'Ing.exact_t', setting default size to 512"),
        "{w}"
    );
    assert!(
        w.contains("No size defined for table 'Ing.ternary_t', setting default size to 40"),
        "{w}"
    );
    assert!(
        !w.contains("h_t"),
        "an @hidden table is not warned about: {w}"
    );
    let size = |n: &str| {
        c.program.pipelines[0]
            .tables
            .iter()
            .find(|t| t.name == n)
            .map(|t| t.size)
    };
    assert_eq!(size("Ing.exact_t"), Some(512));
    assert_eq!(size("Ing.ternary_t"), Some(40));
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    match fill(&mut sw, "Ing.exact_t", "hdr.eth.type", false, 513) {
        Some((512, ApiError::TableFull { capacity, .. })) => assert_eq!(capacity, 512),
        other => panic!("the 513th add should be refused as full: {other:?}"),
    }
    match fill(&mut sw, "Ing.ternary_t", "hdr.eth.dst", true, 41) {
        Some((40, ApiError::TableFull { capacity, .. })) => assert_eq!(capacity, 40),
        other => panic!("the 41st add should be refused as full: {other:?}"),
    }
}
