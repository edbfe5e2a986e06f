//! Tests of the dependency graph: rewrite chains stay linear, and the covers that keep them
//! so leave the placement of random programs unchanged.

use super::*;

/// A TNA program whose ingress is `body` (over `meta.a`, `meta.b`: `bit<32>`).
fn program(body: &str) -> pipeline::ir::Program {
    match lower("", body) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// A TNA program whose ingress control declares `decls` and applies `body`.
fn lower(decls: &str, body: &str) -> Result<pipeline::ir::Program, String> {
    let text = format!(
        r#"#include <core.p4>
#include <tna.p4>
header eth_t {{ bit<48> dst; bit<48> src; bit<16> type; }}
struct headers_t {{ eth_t eth; }}
struct meta_t {{ bit<32> a; bit<32> b; }}
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {{
  state start {{ pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.eth); transition accept; }}
}}
control Ing(inout headers_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md, inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
{decls}
  apply {{
{body}
ig_tm_md.ucast_egress_port = (bit<9>)meta.a;
  }}
}}
control ID(packet_out pkt, inout headers_t hdr, in meta_t meta, in ingress_intrinsic_metadata_for_deparser_t d) {{ apply {{ pkt.emit(hdr); }} }}
parser EP(packet_in pkt, out headers_t hdr, out meta_t meta, out egress_intrinsic_metadata_t eg_intr_md) {{ state start {{ pkt.extract(eg_intr_md); transition accept; }} }}
control Eg(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md, in egress_intrinsic_metadata_from_parser_t a, inout egress_intrinsic_metadata_for_deparser_t b, inout egress_intrinsic_metadata_for_output_port_t c) {{ apply {{ }} }}
control ED(packet_out pkt, inout headers_t hdr, in meta_t meta, in egress_intrinsic_metadata_for_deparser_t d) {{ apply {{ pkt.emit(hdr); }} }}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
"#
    );
    crate::compile::lower_str("chain.p4", &text, &Default::default())
        .map(|c| c.program)
        .map_err(|f| f.render())
}

/// A small deterministic generator (64-bit LCG).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Fields the random programs touch: whole metadata fields, slices of them, and header
/// fields that share bytes.
const PLACES: [&str; 10] = [
    "meta.a",
    "meta.b",
    "meta.a[7:0]",
    "meta.a[15:4]",
    "meta.b[31:16]",
    "hdr.eth.type",
    "hdr.eth.type[3:0]",
    "hdr.eth.dst[47:40]",
    "hdr.eth.src",
    "meta.b[0:0]",
];

fn width(place: &str) -> u32 {
    match place {
        "meta.a" | "meta.b" => 32,
        "meta.a[7:0]" | "hdr.eth.dst[47:40]" => 8,
        "meta.a[15:4]" => 12,
        "meta.b[31:16]" | "hdr.eth.type" => 16,
        "hdr.eth.type[3:0]" => 4,
        "hdr.eth.src" => 48,
        _ => 1,
    }
}

fn random_block(r: &mut Rng, depth: u32, applied: &mut [bool; 2], out: &mut String) {
    for _ in 0..1 + r.below(6) {
        let dst = PLACES[r.below(PLACES.len() as u64) as usize];
        let src = PLACES[r.below(PLACES.len() as u64) as usize];
        let w = width(dst);
        match r.below(if depth < 2 { 6 } else { 4 }) {
            0 | 1 => out.push_str(&format!("{dst} = (bit<{w}>){src} + {};\n", r.below(2))),
            2 => out.push_str(&format!("{dst} = {};\n", r.below(2))),
            3 => {
                let t = r.below(3) as usize;
                match applied.get_mut(t) {
                    Some(done) if !*done => {
                        *done = true;
                        out.push_str(&format!("t{}.apply();\n", t + 1));
                    }
                    _ => out.push_str("hdr.eth.setValid();\n"),
                }
            }
            _ => {
                let c = r.below(2);
                let cond = if r.below(3) == 0 {
                    "hdr.eth.isValid()".to_string()
                } else {
                    format!("{src} == {c}")
                };
                out.push_str(&format!("if ({cond}) {{\n"));
                random_block(r, depth + 1, applied, out);
                out.push_str("} else {\n");
                random_block(r, depth + 1, applied, out);
                out.push_str("}\n");
            }
        }
    }
}

/// The placement of random programs (assignments over overlapping fields and slices,
/// tables, validity, nested `if`s) is the same with covers as without: every edge a cover
/// drops is implied.
#[test]
fn covers_leave_random_placements_unchanged() {
    let mut r = Rng(17);
    let (mut fewer, mut placed) = (0, 0);
    let decls = "action set_a(bit<32> v) { meta.a = v; }\n\
        action set_t(bit<16> v) { hdr.eth.type = v; }\n\
        table t1 { key = { meta.a : exact; } actions = { set_a; set_t; NoAction; } size = 64; }\n\
        table t2 { key = { hdr.eth.type : ternary; meta.b[31:16] : exact; }\n\
            actions = { set_t; NoAction; } size = 64; }\n";
    for _ in 0..150 {
        let mut body = String::new();
        random_block(&mut r, 0, &mut [false; 2], &mut body);
        let p = match lower(decls, &body) {
            Ok(p) => p,
            Err(e) => panic!("{body}\n{e}"),
        };
        let pipe = &p.pipelines[0];
        let with = edges(&build(pipe, Gress::Ingress, &IgnorePairs::new()));
        COVERS_OFF.with(|c| c.set(true));
        let without = edges(&build(pipe, Gress::Ingress, &IgnorePairs::new()));
        COVERS_OFF.with(|c| c.set(false));
        assert!(with <= without);
        fewer += usize::from(with < without);
        for target in [pipeline::ir::Target::Tofino1, pipeline::ir::Target::Tofino2] {
            let run = |off: bool| {
                COVERS_OFF.with(|c| c.set(off));
                let mut p = p.clone();
                let r = super::super::place_with_warnings(&mut p, target);
                COVERS_OFF.with(|c| c.set(false));
                (r.is_ok(), format!("{r:?}"))
            };
            let (fits, on) = run(false);
            assert_eq!(on, run(true).1, "{body}");
            placed += usize::from(fits);
        }
    }
    // Not vacuous: covers dropped edges in many programs, and most of them placed.
    assert!(
        fewer >= 30 && placed >= 150,
        "{fewer} with fewer edges, {placed} placed"
    );
}

fn edges(units: &[Unit]) -> usize {
    units.iter().map(|u| u.deps.len()).sum()
}

/// A chain of statements that each read what the one before wrote: the earlier writers
/// of `meta.a` are covered by the latest (every earlier edge is implied through it), so
/// the graph has about one edge per statement rather than one per pair.
#[test]
fn a_rewrite_chain_has_linear_edges() {
    for n in [50usize, 400] {
        let body: String = (0..n)
            .map(|i| format!("    meta.a = meta.a + {};\n", i % 7 + 1))
            .collect();
        let p = program(&body);
        let units = build(&p.pipelines[0], Gress::Ingress, &IgnorePairs::new());
        assert!(units.len() > n, "{} units", units.len());
        let e = edges(&units);
        assert!(e <= 2 * units.len(), "{n} statements: {e} edges");
        // Still a chain: each statement depends on the one before.
        for (i, u) in units.iter().enumerate().skip(1).take(n - 1) {
            assert!(
                u.deps.iter().any(|d| d.on == i - 1 && d.gap == 1),
                "unit {i}: {:?}",
                u.deps
            );
        }
        // The same chain inside a branch.
        let p = program(&format!("if (hdr.eth.type == 1) {{\n{body}}}\n"));
        let units = build(&p.pipelines[0], Gress::Ingress, &IgnorePairs::new());
        let e = edges(&units);
        assert!(
            e <= 3 * units.len(),
            "{n} statements in a branch: {e} edges"
        );
    }
}

/// Inside a branch a rewrite covers the earlier ones for the rest of the branch (linear
/// there too); after the `if` they are back (the unit after it may run without the branch).
#[test]
fn branches_and_partial_rewrites_keep_their_edges() {
    let n = 20;
    let chain: String = (0..n)
        .map(|i| format!("      meta.a = meta.a + {};\n", i % 7 + 1))
        .collect();
    let p = program(&format!(
        "    if (hdr.eth.type == 1) {{\n{chain}    }}\n    meta.b = meta.a;\n"
    ));
    let units = build(&p.pipelines[0], Gress::Ingress, &IgnorePairs::new());
    // units[0] is the `if`, 1..=n the chain, n + 1 the copy after it.
    let last = &units[n];
    let strict: Vec<usize> = last
        .deps
        .iter()
        .filter(|d| d.gap == 1)
        .map(|d| d.on)
        .collect();
    assert_eq!(strict, vec![n - 1], "{:?}", last.deps);
    let copy = &units[n + 1];
    assert_eq!(copy.deps.len(), n, "{:?}", copy.deps);
    let partial: String = (0..n)
        .map(|i| format!("    meta.a[15:0] = meta.a[15:0] + {};\n", i % 7 + 1))
        .collect();
    let p = program(&format!("{partial}    meta.b = meta.a;\n"));
    let units = build(&p.pipelines[0], Gress::Ingress, &IgnorePairs::new());
    // `meta.b = meta.a` reads the upper half too, last written by nobody; the lower half's
    // writers are covered by the last one.
    let copy = &units[n];
    assert_eq!(copy.deps.len(), 1, "{:?}", copy.deps);
    assert_eq!(copy.deps[0].on, n - 1);
}
