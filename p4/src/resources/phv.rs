//! PHV capacity: a lower bound on the container bits a program needs, refused only when even
//! that bound cannot fit (bf-p4c's allocator packs, overlays and splits far more cleverly; this
//! check never claims a program fits, only that some certainly cannot).
//!
//! The bound looks at one moment: the end of parsing, before MAU stage 0. Along one path
//! through a gress's parse graph, every header field the parser extracted is then in PHV if
//! its value is used later, and two such fields cannot share container bits (both hold live
//! values; the parser wrote both). A field counts where the parser's value certainly reaches
//! a use, so that bf-p4c cannot drop the extract: all of it when nothing else in the gress
//! writes it and the MAU reads it or the deparser emits or reads it; the bits the MAU reads
//! when only a deparser checksum rewrites it; the bits a table key or gateway condition reads
//! before any MAU write in program order when the MAU rewrites it; nothing when a parser
//! statement other than the extract writes it. Varbit fields and metadata are left out. Bits
//! count one by one, as if bf-p4c packed fields perfectly. Headers on exclusive paths may
//! overlay, so a gress needs the most of any one path, not the sum; each container belongs to
//! one gress, so the two gresses' needs add up against the chip's containers.
//!
//! Per target (see [`PhvProfile`]): on Tofino 1 fields the MAU reads must sit in MAU
//! containers, the others may use tagalong ones too; on Tofino 2 the parser fills only normal
//! and mocha containers, and fields the MAU does not read may travel in CLOTs instead, so up
//! to [`PhvProfile::clot_bits`] of them are not counted.
//!
//! The walk follows parse paths depth first (loops over a header stack once per element) for
//! at most [`MAX_VISITS`] state visits; a path not walked only makes the bound lower.

use pipeline::ir::{Gress, GressProgram, Parser, PhvLayout, Pipeline, Stmt};

use super::effects::{Collector, Effects, Loc, Mode};
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::parse_depth::next_states;
use super::profile::Profile;
use super::units::{Unit, UnitKind};

/// Most state visits of the path walk; the bound is the largest over the paths walked.
pub const MAX_VISITS: usize = 100_000;

/// Longest path walked (in states); a longer one is measured up to there.
const MAX_PATH: usize = 512;

/// One parse path and the PHV bits it needs at the end of parsing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PathNeed {
    pub bits: u32,
    /// Indices into `Parser::states`, from `start`.
    pub states: Vec<usize>,
}

/// What one gress needs at least.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GressNeed {
    /// The path needing the most bits of containers the parser can fill.
    pub total: PathNeed,
    /// The path whose fields read by the MAU need the most bits (MAU containers only).
    pub mau: PathNeed,
}

/// Counted bits of one header: read by the MAU, or only emitted / read by the deparser.
#[derive(Debug, Clone, Copy, Default)]
struct Weight {
    mau: u32,
    other: u32,
}

/// A set of PHV buffer bits.
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(bits: usize) -> Self {
        BitSet(vec![0; bits.div_ceil(64)])
    }

    fn get(&self, i: u32) -> bool {
        self.0
            .get(i as usize / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    fn set(&mut self, i: u32) {
        if let Some(w) = self.0.get_mut(i as usize / 64) {
            *w |= 1 << (i % 64);
        }
    }

    fn mark(&mut self, loc: &Loc) {
        if let Loc::Bits { start, end } = *loc {
            for i in start..end {
                self.set(i);
            }
        }
    }

    fn mark_all(&mut self, locs: &[Loc]) {
        for l in locs {
            self.mark(l);
        }
    }
}

/// The deparser's reads (emit lists of mirror / resubmit / digest / pktgen, conditions,
/// checksum inputs) and writes (checksum results), and which headers it emits.
fn deparser(body: &[Stmt], col: &mut Collector<'_>, fx: &mut Effects, emitted: &mut [bool]) {
    for s in body {
        match s {
            Stmt::Emit(h) => {
                if let Some(e) = emitted.get_mut(h.index()) {
                    *e = true;
                }
            }
            Stmt::MirrorEmit { session, header } => {
                col.expr(session, fx, Mode::Action);
                for e in header {
                    col.expr(e, fx, Mode::Action);
                }
            }
            Stmt::ResubmitEmit { header } | Stmt::PktgenEmit { header } => {
                for e in header {
                    col.expr(e, fx, Mode::Action);
                }
            }
            Stmt::DigestPack { fields, .. } => {
                for e in fields {
                    col.expr(e, fx, Mode::Action);
                }
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                col.expr(cond, fx, Mode::Action);
                deparser(then, col, fx, emitted);
                deparser(els, col, fx, emitted);
            }
            other => col.stmt(other, fx),
        }
    }
}

/// Writes of parser statements other than extraction (assignments, checksum deposits).
fn parser_writes(body: &[Stmt], col: &mut Collector<'_>, fx: &mut Effects) {
    for s in body {
        match s {
            Stmt::Assign { .. } => col.stmt(s, fx),
            Stmt::ChecksumDeposit { dst, .. } => fx.writes.push(Loc::field(*dst)),
            Stmt::If { then, els, .. } => {
                parser_writes(then, col, fx);
                parser_writes(els, col, fx);
            }
            _ => {}
        }
    }
}

/// Bits read by a table key or a gateway condition before any MAU write to them in program
/// order (units are in pre-order, so a unit that can run before another comes first): there
/// the MAU reads the parser's value even of a field it rewrites later.
fn read_before_written(
    pipe: &Pipeline,
    col: &mut Collector<'_>,
    units: &[Unit],
    nbits: usize,
) -> BitSet {
    let (mut early, mut written) = (BitSet::new(nbits), BitSet::new(nbits));
    for u in units {
        let mut fx = Effects::default();
        match u.kind {
            UnitKind::Table(t) => {
                for k in pipe.tables.get(t.index()).map_or(&[][..], |t| &t.keys) {
                    col.expr(&k.expr, &mut fx, Mode::Match);
                }
            }
            UnitKind::Gateway(_) => {
                if let Some(c) = &u.cond {
                    col.expr(c, &mut fx, Mode::Match);
                }
            }
            UnitKind::Statements => {}
        }
        for l in &fx.match_reads {
            if let Loc::Bits { start, end } = *l {
                for i in (start..end).filter(|&i| !written.get(i)) {
                    early.set(i);
                }
            }
        }
        written.mark_all(&u.fx.writes);
    }
    early
}

/// The counted bits of each header of `g` (see the module doc).
fn weights(pipe: &Pipeline, g: &GressProgram, units: &[Unit]) -> Vec<Weight> {
    let phv = &g.phv;
    let nbits = (phv.bytes as usize).saturating_mul(8);
    let (mut mau_reads, mut mau_writes) = (BitSet::new(nbits), BitSet::new(nbits));
    for u in units {
        mau_reads.mark_all(&u.fx.match_reads);
        mau_reads.mark_all(&u.fx.action_reads);
        mau_writes.mark_all(&u.fx.writes);
    }
    let mut col = Collector::new(pipe, phv);
    let early = read_before_written(pipe, &mut col, units, nbits);
    let mut pfx = Effects::default();
    for st in &g.parser.states {
        parser_writes(&st.body, &mut col, &mut pfx);
    }
    let mut parser_w = BitSet::new(nbits);
    parser_w.mark_all(&pfx.writes);
    let mut dfx = Effects::default();
    let mut emitted = vec![false; phv.headers.len()];
    deparser(&g.deparser.body, &mut col, &mut dfx, &mut emitted);
    let (mut deparser_w, mut late_reads) = (BitSet::new(nbits), BitSet::new(nbits));
    deparser_w.mark_all(&dfx.writes);
    late_reads.mark_all(&dfx.action_reads);
    late_reads.mark_all(&dfx.match_reads);

    let varbit = |offset: u32| phv.varbits.iter().any(|v| v.field.offset == offset);
    phv.headers
        .iter()
        .zip(&emitted)
        .map(|(h, &emit)| {
            let mut w = Weight::default();
            for info in h.fields.clone().filter_map(|i| phv.fields.get(i as usize)) {
                let f = info.field;
                let bits = f.offset..f.offset.saturating_add(u32::from(f.width));
                let any = |set: &BitSet| bits.clone().any(|i| set.get(i));
                if varbit(f.offset) || any(&parser_w) {
                    continue;
                }
                // Rewritten by the MAU: only the reads before the first write are certain;
                // by the deparser (a checksum): the MAU's reads, not the emit.
                let (mau_w, dep_w) = (any(&mau_writes), any(&deparser_w));
                for i in bits {
                    if (mau_w && early.get(i)) || (!mau_w && mau_reads.get(i)) {
                        w.mau += 1;
                    } else if !mau_w && !dep_w && (emit || late_reads.get(i)) {
                        w.other += 1;
                    }
                }
            }
            w
        })
        .collect()
}

/// An extraction of a parser state: a header, or the next element of a stack.
#[derive(Clone, Copy)]
enum Op {
    Header(usize),
    Next(usize),
}

fn ops(body: &[Stmt]) -> Vec<Op> {
    body.iter()
        .filter_map(|s| match s {
            Stmt::Extract(h) | Stmt::ExtractVarbit { header: h, .. } => Some(Op::Header(h.index())),
            Stmt::ExtractNext(st) => Some(Op::Next(st.index())),
            _ => None,
        })
        .collect()
}

/// The depth-first walk over parse paths.
struct Walk<'a> {
    ops: Vec<Vec<Op>>,
    succ: Vec<Vec<usize>>,
    weight: &'a [Weight],
    stacks: Vec<Vec<usize>>,
    clot_bits: u32,
    /// Per header: how often the current path extracts it.
    held: Vec<u32>,
    /// Per stack: the next element to extract on the current path.
    next: Vec<usize>,
    on_path: Vec<u32>,
    path: Vec<usize>,
    mau: u32,
    other: u32,
    budget: usize,
    best: GressNeed,
}

impl Walk<'_> {
    fn take(&mut self, h: usize, add: bool) {
        let w = self.weight.get(h).copied().unwrap_or_default();
        let Some(n) = self.held.get_mut(h) else {
            return;
        };
        if add {
            *n += 1;
            if *n == 1 {
                self.mau += w.mau;
                self.other += w.other;
            }
        } else {
            *n -= 1;
            if *n == 0 {
                self.mau -= w.mau;
                self.other -= w.other;
            }
        }
    }

    /// Whether entering `s` again extracts a new stack element.
    fn progresses(&self, s: usize) -> bool {
        self.ops[s].iter().any(|op| match *op {
            Op::Next(st) => self.stacks.get(st).is_some_and(|e| self.next[st] < e.len()),
            Op::Header(_) => false,
        })
    }

    fn record(&mut self) {
        let total = self.mau + self.other.saturating_sub(self.clot_bits);
        if total > self.best.total.bits {
            self.best.total = PathNeed {
                bits: total,
                states: self.path.clone(),
            };
        }
        if self.mau > self.best.mau.bits {
            self.best.mau = PathNeed {
                bits: self.mau,
                states: self.path.clone(),
            };
        }
    }

    fn visit(&mut self, s: usize) {
        if self.budget == 0 || self.path.len() >= MAX_PATH {
            return;
        }
        self.budget -= 1;
        let (mut taken, mut advanced) = (Vec::new(), Vec::new());
        let mut ok = true;
        for i in 0..self.ops[s].len() {
            let h = match self.ops[s][i] {
                Op::Header(h) => h,
                Op::Next(st) => match self.stacks.get(st).and_then(|e| e.get(self.next[st])) {
                    Some(&h) => {
                        self.next[st] += 1;
                        advanced.push(st);
                        h
                    }
                    // The stack is full: the parse ends before this state (bf-p4c).
                    None => {
                        ok = false;
                        break;
                    }
                },
            };
            self.take(h, true);
            taken.push(h);
        }
        if ok {
            self.path.push(s);
            self.on_path[s] += 1;
            self.record();
            for i in 0..self.succ[s].len() {
                let n = self.succ[s][i];
                if self.on_path[n] == 0 || self.progresses(n) {
                    self.visit(n);
                }
            }
            self.on_path[s] -= 1;
            self.path.pop();
        }
        for h in taken {
            self.take(h, false);
        }
        for st in advanced {
            self.next[st] -= 1;
        }
    }
}

/// The PHV bits gress `g` of `pipe` needs at least (`units`: its MAU units).
pub(crate) fn need(pipe: &Pipeline, g: &GressProgram, units: &[Unit], p: &Profile) -> GressNeed {
    let parser = &g.parser;
    let n = parser.states.len();
    if n == 0 {
        return GressNeed::default();
    }
    let weight = weights(pipe, g, units);
    let phv: &PhvLayout = &g.phv;
    let mut walk = Walk {
        ops: parser.states.iter().map(|s| ops(&s.body)).collect(),
        succ: (0..n)
            .map(|s| {
                let mut v = next_states(parser, s);
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect(),
        weight: &weight,
        stacks: phv
            .stacks
            .iter()
            .map(|s| s.elements.iter().map(|h| h.index()).collect())
            .collect(),
        clot_bits: p.phv.clot_bits,
        held: vec![0; phv.headers.len()],
        next: vec![0; phv.stacks.len()],
        on_path: vec![0; n],
        path: Vec::new(),
        mau: 0,
        other: 0,
        budget: MAX_VISITS,
        best: GressNeed::default(),
    };
    walk.visit(parser.start.index().min(n - 1));
    walk.best
}

/// A path for messages: state names without the parser's prefix, long paths elided.
pub(crate) fn path_names(parser: &Parser, states: &[usize]) -> Vec<String> {
    let prefix = format!("{}.", parser.name);
    states
        .iter()
        .filter_map(|&s| parser.states.get(s))
        .map(|st| {
            st.name
                .strip_prefix(&prefix)
                .unwrap_or(&st.name)
                .to_string()
        })
        .collect()
}

fn show_path(parser: &Parser, states: &[usize]) -> String {
    let names = path_names(parser, states);
    let shown = if names.len() > 8 {
        let mut v = names[..3].to_vec();
        v.push("…".into());
        v.extend_from_slice(&names[names.len() - 4..]);
        v
    } else {
        names
    };
    format!("`{}` of `{}`", shown.join(" → "), parser.name)
}

/// The note saying what was counted (`used`: how a counted field is used).
fn counted(used: &str) -> String {
    format!("counted: the header fields extracted on that path that {used}, and that nothing else writes; the parser fills them all before stage 0, so no two share container bits (headers on exclusive parse paths may)")
}

const USED: &str = "the MAU reads or the deparser emits";
const READ: &str = "the MAU reads";

fn object(pi: usize, gress: Gress, path: &PathNeed) -> ObjectRef {
    ObjectRef::ParserState {
        pipeline: pi,
        gress,
        state: path.states.last().copied().unwrap_or(0),
    }
}

/// Issues when the needs of both gresses of pipeline `pi` cannot fit `p`'s PHV.
pub(crate) fn check(
    pi: usize,
    pipe: &Pipeline,
    needs: &[(Gress, GressNeed)],
    p: &Profile,
) -> Vec<ResourceIssue> {
    let phv = &p.phv;
    let parser = |g: Gress| match g {
        Gress::Ingress => &pipe.ingress.parser,
        Gress::Egress => &pipe.egress.parser,
    };
    let other = |g: Gress| match g {
        Gress::Ingress => Gress::Egress,
        Gress::Egress => Gress::Ingress,
    };
    let total = phv.total_bits();
    let mut issues = Vec::new();
    for (g, n) in needs {
        let cap = total - phv.reserved_bits;
        let mau_cap = phv.mau_bits - phv.reserved_bits;
        let of = if phv.tagalong_bits > 0 {
            format!(
                "{} bits of MAU containers and {} of tagalong ones, less the {} only {} may use",
                phv.mau_bits,
                phv.tagalong_bits,
                phv.reserved_bits,
                other(*g)
            )
        } else {
            "its normal and mocha containers; the parser cannot fill dark ones".to_string()
        };
        if n.total.bits > cap {
            let mut issue = ResourceIssue::error(
                IssueKind::PhvCapacity,
                object(pi, *g, &n.total),
                format!(
                    "{g} needs at least {} bits of PHV on the parse path {}: {} gives one gress at most {cap} ({of})",
                    n.total.bits,
                    show_path(parser(*g), &n.total.states),
                    p.name()
                ),
            )
            .with_note(counted(USED));
            if phv.clot_bits > 0 {
                issue = issue.with_note(format!(
                    "up to {} bits of fields the MAU does not read are left out: they may travel in CLOTs",
                    phv.clot_bits
                ));
            }
            issues.push(issue.with_help(
                "extract fewer headers on one path (parse alternatives on exclusive branches of a `select`), or emit fewer",
            ));
        } else if n.mau.bits > mau_cap {
            issues.push(
                ResourceIssue::error(
                    IssueKind::PhvCapacity,
                    object(pi, *g, &n.mau),
                    format!(
                        "{g} needs at least {} bits of MAU containers on the parse path {}: {} gives one gress at most {mau_cap}",
                        n.mau.bits,
                        show_path(parser(*g), &n.mau.states),
                        p.name()
                    ),
                )
                .with_note("the MAU cannot read fields in tagalong containers")
                .with_note(counted(READ))
                .with_help("read fewer header fields in the MAU, or parse alternatives on exclusive branches of a `select`"),
            );
        }
    }
    if !issues.is_empty() || needs.len() != 2 {
        return issues;
    }
    let (a, b) = (&needs[0], &needs[1]);
    let both = |pick: fn(&GressNeed) -> &PathNeed, cap: u32, what: &str, used: &str| {
        let (x, y) = (pick(&a.1), pick(&b.1));
        if x.bits + y.bits <= cap {
            return None;
        }
        let big = if x.bits >= y.bits { (a.0, x) } else { (b.0, y) };
        Some(
            ResourceIssue::error(
                IssueKind::PhvCapacity,
                object(pi, big.0, big.1),
                format!(
                    "pipeline `{}` needs at least {} bits of {what}: {} {} on the parse path {} plus {} {} on {}; {} has {cap}",
                    pipe.name,
                    x.bits + y.bits,
                    a.0,
                    x.bits,
                    show_path(parser(a.0), &x.states),
                    b.0,
                    y.bits,
                    show_path(parser(b.0), &y.states),
                    p.name()
                ),
            )
            .with_note("each PHV container belongs to one gress")
            .with_note(counted(used))
            .with_help("extract fewer headers on one path, or bridge less from ingress to egress"),
        )
    };
    if let Some(i) = both(|n| &n.total, total, "PHV", USED) {
        issues.push(i);
    } else if phv.tagalong_bits > 0 {
        issues.extend(both(|n| &n.mau, phv.mau_bits, "MAU containers", READ));
    }
    issues
}
