//! Differential tests: the flat program and the native code against the tree interpreter.
//!
//! Random programs (random expressions over every operator, slices, concatenations, casts,
//! ternaries; random assignments, gateways, table applies with hit/miss and action_run branches,
//! action calls, counters, `exit`/`return`) over a parser with selects, ranges, a reject and a
//! checksum, and a deparser with a checksum update, run on random packets
//! through each engine and the tree interpreter. Every pass must give the same result, deparsed bytes, PHV bytes,
//! header validity, and at the end the same counters and table hit/miss counts.

use std::sync::Arc;

use crate::exec::{
    run_gress, run_gress_flat, run_gress_tree, EngineKind, Engines, GressWork, PassInput,
    PassIntrinsics,
};
use crate::ir::*;
use crate::state::PipeState;
use crate::trace::{NoTrace, Recorder};

/// A pass of `packet` with no intrinsic metadata listed and nothing extra, at `now`.
fn ingress_input(packet: &[u8], now: u64) -> PassInput<'_> {
    PassInput {
        intrinsics: PassIntrinsics::Listed(&[]),
        extra: &[],
        packet,
        now,
    }
}

/// xorshift64: a small deterministic generator (the exec tests' one).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const ETH: u32 = 0; // header ids
const IP: u32 = 1;

fn fr(offset: u32, width: u16) -> FieldRef {
    FieldRef { offset, width }
}

/// Ethernet (14 B) then IPv4 (20 B) then 14 bytes of metadata.
fn fields() -> Vec<FieldRef> {
    vec![
        fr(0, 48),   // 0 eth.dst
        fr(48, 48),  // 1 eth.src
        fr(96, 16),  // 2 eth.type
        fr(112, 4),  // 3 ip.version
        fr(116, 4),  // 4 ip.ihl
        fr(120, 8),  // 5 ip.tos
        fr(128, 16), // 6 ip.len
        fr(144, 16), // 7 ip.id
        fr(160, 3),  // 8 ip.flags
        fr(163, 13), // 9 ip.frag
        fr(176, 8),  // 10 ip.ttl
        fr(184, 8),  // 11 ip.proto
        fr(192, 16), // 12 ip.csum
        fr(208, 32), // 13 ip.src
        fr(240, 32), // 14 ip.dst
        fr(272, 16), // 15 m.a
        fr(288, 8),  // 16 m.b
        fr(296, 32), // 17 m.c
        fr(328, 9),  // 18 m.port (watched: ucast)
        fr(337, 1),  // 19 m.flag
        fr(338, 16), // 20 m.grp (watched: mcast a)
        fr(354, 70), // 21 m.wide
    ]
}

const PHV_BYTES: u32 = 54;

struct Gen<'a> {
    r: &'a mut Rng,
    fields: Vec<FieldRef>,
    /// Widths of the running action's parameters (empty outside actions).
    params: Vec<u16>,
}

impl Gen<'_> {
    fn cast(e: Expr, from: u16, to: u16, sign: bool) -> Expr {
        if from == to {
            e
        } else {
            Expr::Cast {
                arg: Box::new(e),
                width: to,
                sign_extend: sign,
            }
        }
    }

    fn leaf(&mut self, width: u16) -> Expr {
        match self.r.below(5) {
            0 | 1 => {
                let f = self.r.pick(&self.fields);
                let sign = self.r.chance(30);
                Self::cast(Expr::Field(f), f.width, width, sign)
            }
            2 if !self.params.is_empty() => {
                let i = self.r.below(self.params.len() as u64) as u16;
                let w = self.params[i as usize];
                Self::cast(Expr::Param { index: i, width: w }, w, width, false)
            }
            3 => Self::cast(
                Expr::Valid(HeaderId(self.r.below(2) as u32)),
                1,
                width,
                false,
            ),
            _ => Expr::Const {
                value: ((self.r.next() as u128) << 64 | self.r.next() as u128) >> self.r.below(128),
                width,
            },
        }
    }

    fn expr(&mut self, width: u16, depth: u32) -> Expr {
        if depth == 0 || self.r.chance(25) {
            return self.leaf(width);
        }
        let d = depth - 1;
        match self.r.below(9) {
            0 => Expr::Unary {
                op: self.r.pick(&[UnOp::Not, UnOp::Neg, UnOp::LNot]),
                arg: Box::new(self.expr(width, d)),
                width,
            },
            1 | 2 => {
                let op = self.r.pick(&[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::SatAdd,
                    BinOp::SatSub,
                    BinOp::Div,
                    BinOp::Mod,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Shl,
                    BinOp::Shr,
                    BinOp::Min,
                    BinOp::Max,
                ]);
                let bw = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    self.r.pick(&[3, 8, width])
                } else {
                    width
                };
                Expr::Binary {
                    op,
                    a: Box::new(self.expr(width, d)),
                    b: Box::new(self.expr(bw, d)),
                    width,
                    signed: self.r.chance(30),
                }
            }
            3 => {
                let ow = self.r.pick(&[1, 4, 9, 16, 48, 70]);
                let op = self.r.pick(&[
                    BinOp::Eq,
                    BinOp::Ne,
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                    BinOp::LAnd,
                    BinOp::LOr,
                ]);
                let (op, a, b) = if self.r.chance(40) {
                    // `field == const`, the fused form, with constants packets often carry.
                    let f = self.r.pick(&self.fields);
                    let value = self.r.pick(&[0u128, 1, 5, 6, 64, 0x0800, 0x0a00_0001]);
                    let cw = self.r.pick(&[f.width, 16, 3]);
                    let op = if self.r.chance(70) { BinOp::Eq } else { op };
                    (op, Expr::Field(f), Expr::Const { value, width: cw })
                } else {
                    (op, self.expr(ow, d), self.expr(ow, d))
                };
                let e = Expr::Binary {
                    op,
                    a: Box::new(a),
                    b: Box::new(b),
                    width: 1,
                    signed: self.r.chance(30),
                };
                Self::cast(e, 1, width, false)
            }
            4 => {
                let lo = self.r.below(u64::from((128 - width).min(10)) + 1) as u16;
                let aw = (lo + width + self.r.below(20) as u16).min(128);
                Expr::Slice {
                    arg: Box::new(self.expr(aw, d)),
                    hi: lo + width - 1,
                    lo,
                }
            }
            5 if width >= 2 => {
                let lw = 1 + self.r.below(width as u64 - 1) as u16;
                Expr::Concat {
                    hi: Box::new(self.expr(width - lw, d)),
                    lo: Box::new(self.expr(lw, d)),
                    width,
                }
            }
            6 => {
                let from = self.r.pick(&[1, 5, 8, 16, 33, 64]);
                Self::cast(self.expr(from, d), from, width, self.r.chance(50))
            }
            7 => Expr::Ternary {
                cond: Box::new(self.expr(1, d)),
                then: Box::new(self.expr(width, d)),
                els: Box::new(self.expr(width, d)),
                width,
            },
            _ => self.leaf(width),
        }
    }

    fn stmt(&mut self, depth: u32, tables: u32, actions: u32, in_action: bool) -> Stmt {
        let f = self.r.pick(&self.fields);
        match self.r.below(12) {
            0..=3 => Stmt::Assign {
                dst: Place::Field(f),
                value: self.expr(f.width, 3),
            },
            4 => {
                let lo = self.r.below(f.width as u64) as u16;
                let hi = lo + self.r.below((f.width - lo) as u64) as u16;
                // Now and then a slice past the field: the tree writes nothing.
                let hi = if self.r.chance(10) { f.width + 2 } else { hi };
                Stmt::Assign {
                    dst: Place::FieldSlice { field: f, hi, lo },
                    value: self.expr(hi.saturating_sub(lo) + 1, 2),
                }
            }
            5 if depth > 0 => Stmt::If {
                cond: self.expr(1, 3),
                then: self.block(depth - 1, tables, actions, in_action, 3),
                els: self.block(depth - 1, tables, actions, in_action, 2),
                stage: 0,
            },
            6 if !in_action && depth > 0 => {
                let t = self.r.below(tables as u64) as u32;
                let branches = match self.r.below(3) {
                    0 => TableBranches::None,
                    1 => TableBranches::HitMiss {
                        hit: self.block(depth - 1, tables, actions, false, 2),
                        miss: self.block(depth - 1, tables, actions, false, 2),
                    },
                    _ => TableBranches::ActionRun {
                        cases: vec![
                            (
                                ActionId(1),
                                self.block(depth - 1, tables, actions, false, 2),
                            ),
                            (
                                ActionId(2),
                                self.block(depth - 1, tables, actions, false, 1),
                            ),
                        ],
                        default: self.block(depth - 1, tables, actions, false, 1),
                    },
                };
                Stmt::ApplyTable {
                    table: TableId(t),
                    branches,
                }
            }
            7 if !in_action => Stmt::CallAction {
                action: ActionId(1 + self.r.below(actions as u64 - 1) as u32),
                args: vec![self.expr(16, 2), self.expr(9, 2), self.expr(48, 1)],
            },
            8 => Stmt::Count {
                counter: CounterId(0),
                index: self.expr(8, 2),
            },
            9 => Stmt::SetValid {
                header: HeaderId(self.r.below(2) as u32),
                valid: self.r.chance(50),
            },
            11 if self.r.chance(50) => {
                // A meter: the direct one (table t_exact's) in actions, else the indexed one
                // with an index past its size now and then; a pre-colour half the time.
                let direct = in_action && self.r.chance(50);
                let index = (!direct).then(|| Box::new(self.expr(8, 1)));
                let color = self.r.chance(50).then(|| Box::new(self.expr(2, 1)));
                let e = Expr::MeterExecute {
                    meter: MeterId(u32::from(direct)),
                    index,
                    color,
                };
                Stmt::Assign {
                    dst: Place::Field(f),
                    value: Self::cast(e, 8, f.width, false),
                }
            }
            10 if self.r.chance(15) => {
                if in_action && self.r.chance(50) {
                    Stmt::Return
                } else {
                    Stmt::Exit
                }
            }
            _ => Stmt::Assign {
                dst: Place::Field(f),
                value: self.leaf(f.width),
            },
        }
    }

    fn block(&mut self, depth: u32, tables: u32, actions: u32, in_action: bool, n: u64) -> Block {
        let n = self.r.below(n + 1);
        (0..n)
            .map(|_| self.stmt(depth, tables, actions, in_action))
            .collect()
    }
}

fn table(name: &str, keys: Vec<(Expr, MatchKind)>) -> Table {
    Table {
        name: name.into(),
        gress: Gress::Ingress,
        keys: keys
            .into_iter()
            .enumerate()
            .map(|(i, (expr, kind))| TableKey {
                name: format!("k{i}"),
                expr,
                kind,
            })
            .collect(),
        actions: (0..3)
            .map(|a| ActionRef {
                action: ActionId(a),
                default_only: false,
                table_only: false,
            })
            .collect(),
        default_action: ActionCall {
            action: ActionId(2),
            args: vec![5, 6, 7],
        },
        default_action_const: false,
        const_entries: vec![],
        entries_const: false,
        size: 64,
        direct_counter: None,
        direct_meter: None,
        idle_timeout: false,
        stage: 0,
        hidden: false,
    }
}

fn program(r: &mut Rng) -> Program {
    let fs = fields();
    let f = |i: usize| fs[i];
    let ip_fields: Vec<Expr> = (3..=14).map(|i| Expr::Field(f(i))).collect();
    let ip_fields_no_csum: Vec<Expr> = (3..=14)
        .filter(|i| *i != 12)
        .map(|i| Expr::Field(f(i)))
        .collect();
    let phv = PhvLayout {
        bytes: PHV_BYTES,
        fields: fs
            .iter()
            .enumerate()
            .map(|(i, x)| FieldInfo {
                name: format!("f{i}"),
                field: *x,
                signed: false,
            })
            .collect(),
        headers: vec![
            HeaderInfo {
                name: "eth".into(),
                type_name: "eth_h".into(),
                byte_offset: 0,
                byte_len: 14,
                fields: 0..3,
            },
            HeaderInfo {
                name: "ip".into(),
                type_name: "ip_h".into(),
                byte_offset: 14,
                byte_len: 20,
                fields: 3..15,
            },
        ],
        stacks: vec![],
        varbits: vec![],
    };
    let k = |value: Value, mask: Value| KeysetElem::Mask { value, mask };
    let parser = Parser {
        name: "p".into(),
        start: StateId(0),
        states: vec![
            ParserState {
                name: "start".into(),
                body: vec![Stmt::Extract(HeaderId(ETH))],
                transition: Transition::Select {
                    keys: vec![Expr::Field(f(2))],
                    cases: vec![
                        SelectCase {
                            keyset: vec![k(0x0800, 0xffff)],
                            next: NextState::State(StateId(1)),
                        },
                        SelectCase {
                            keyset: vec![KeysetElem::Range {
                                lo: 0x0801,
                                hi: 0x08ff,
                            }],
                            next: NextState::Reject,
                        },
                    ],
                    default: NextState::Accept,
                },
            },
            ParserState {
                name: "ip".into(),
                body: vec![
                    Stmt::Extract(HeaderId(IP)),
                    Stmt::ChecksumAdd {
                        checksum: ChecksumId(0),
                        inputs: ip_fields.clone(),
                    },
                    Stmt::Assign {
                        dst: Place::Field(f(19)),
                        value: Expr::ChecksumVerify(ChecksumId(0)),
                    },
                ],
                transition: Transition::Select {
                    keys: vec![Expr::Field(f(4)), Expr::Field(f(11))],
                    cases: vec![
                        SelectCase {
                            keyset: vec![k(5, 0xf), k(6, 0xff)],
                            next: NextState::State(StateId(2)),
                        },
                        SelectCase {
                            keyset: vec![k(5, 0xf), k(0, 0)],
                            next: NextState::Accept,
                        },
                    ],
                    default: NextState::Reject,
                },
            },
            ParserState {
                name: "skip".into(),
                body: vec![Stmt::Advance(Expr::constant(16, 32))],
                transition: Transition::Direct(NextState::Accept),
            },
        ],
    };
    let mut g = Gen {
        r,
        fields: fs.clone(),
        params: vec![],
    };
    let mut t_exact = table("t_exact", vec![(Expr::Field(f(16)), MatchKind::Exact)]);
    t_exact.direct_meter = Some(MeterId(1));
    let tables = vec![
        t_exact,
        table("t_lpm", vec![(Expr::Field(f(14)), MatchKind::Lpm)]),
        table(
            "t_tern",
            vec![
                (Expr::Field(f(11)), MatchKind::Ternary),
                (g.expr(16, 2), MatchKind::Range),
            ],
        ),
    ];
    let mut actions = vec![Action {
        name: "NoAction".into(),
        params: vec![],
        body: vec![],
    }];
    for a in 1..3 {
        g.params = vec![16, 9, 48];
        let body = g.block(2, 3, 3, true, 5);
        actions.push(Action {
            name: format!("a{a}"),
            params: g
                .params
                .iter()
                .enumerate()
                .map(|(i, w)| ActionParam {
                    name: format!("p{i}"),
                    width: *w,
                })
                .collect(),
            body,
        });
    }
    g.params = vec![];
    let control = g.block(3, 3, 3, false, 8);
    let mut deparser = vec![Stmt::Assign {
        dst: Place::Field(f(12)),
        value: Expr::ChecksumUpdate {
            checksum: ChecksumId(0),
            inputs: ip_fields_no_csum,
        },
    }];
    deparser.extend(deparser_externs(&mut g));
    deparser.extend([Stmt::Emit(HeaderId(ETH)), Stmt::Emit(HeaderId(IP))]);
    // Some programs have a prefix of zeros the parser reads as the start of Ethernet: headers
    // that straddle the prefix and the packet (a packet parsed in place reads both).
    let prefix = PrefixLayout {
        bytes: [0, 0, 4, 16][r.below(4) as usize],
        fields: Vec::new(),
    };
    let ingress = GressProgram {
        phv,
        prefix,
        intrinsics: IntrinsicBindings {
            fields: vec![
                (Intrinsic::TmUcastEgressPort, f(18)),
                (Intrinsic::TmMcastGrpA, f(20)),
            ],
        },
        parser,
        control: Control {
            name: "ig".into(),
            body: control,
        },
        deparser: Control {
            name: "igd".into(),
            body: deparser,
        },
    };
    let egress = GressProgram {
        phv: PhvLayout::default(),
        prefix: PrefixLayout::default(),
        intrinsics: IntrinsicBindings::default(),
        parser: Parser {
            name: "ep".into(),
            start: StateId(0),
            states: vec![ParserState {
                name: "start".into(),
                body: vec![],
                transition: Transition::Direct(NextState::Accept),
            }],
        },
        control: Control {
            name: "eg".into(),
            body: vec![],
        },
        deparser: Control {
            name: "egd".into(),
            body: vec![],
        },
    };
    let pl = Pipeline {
        name: "pipe".into(),
        ingress,
        egress,
        tables,
        actions,
        registers: vec![],
        register_actions: vec![],
        register_params: vec![],
        hashes: vec![],
        counters: vec![Counter {
            name: "c".into(),
            kind: CounterKind::PacketsAndBytes,
            size: 12,
            direct_table: None,
            bytes: Default::default(),
        }],
        meters: meters(),
        checksums: vec![Checksum {
            name: "ck".into(),
            gress: Gress::Ingress,
        }],
        digests: (0..2)
            .map(|d| Digest {
                name: format!("d{d}"),
                type_name: format!("d{d}_t"),
                fields: vec![],
            })
            .collect(),
        action_profiles: Vec::new(),
        value_sets: Vec::new(),
        filters: Vec::new(),
        ghost: None,
    };
    Program {
        name: "random".into(),
        target: Target::Tofino1,
        pipelines: vec![pl],
        pipe_map: vec![0],
        errors: ErrorEnum::default(),
    }
}

/// Widths of digest and mirror header values (odd ones, and past 64 bits).
const ODD_WIDTHS: [u16; 8] = [1, 3, 9, 13, 16, 32, 48, 70];

/// Now and then digests (of both types, several in a pass) and a mirror request, with values
/// of odd widths.
fn deparser_externs(g: &mut Gen) -> Vec<Stmt> {
    let mut out = Vec::new();
    for _ in 0..g.r.below(4) {
        let n = 1 + g.r.below(5);
        out.push(Stmt::DigestPack {
            digest: DigestId(g.r.below(2) as u32),
            fields: (0..n)
                .map(|_| {
                    let w = g.r.pick(&ODD_WIDTHS);
                    g.expr(w, 2)
                })
                .collect(),
        });
    }
    if g.r.chance(60) {
        let n = g.r.below(5);
        out.push(Stmt::MirrorEmit {
            session: g.expr(10, 2),
            header: (0..n)
                .map(|_| {
                    let w = g.r.pick(&ODD_WIDTHS);
                    g.expr(w, 1)
                })
                .collect(),
        });
    }
    out
}

/// An indexed byte meter of 6 cells (indices past it wrap) and table t_exact's direct packet
/// meter, each with its own colour encoding.
fn meters() -> Vec<Meter> {
    vec![
        Meter {
            name: "m_idx".into(),
            kind: MeterKind::Bytes,
            size: 6,
            direct_table: None,
            colors: MeterColors {
                green: 0x11,
                yellow: 0x22,
                red: 0x33,
            },
            bytes: ByteAccounting::default(),
        },
        Meter {
            name: "m_dir".into(),
            kind: MeterKind::Packets,
            size: 0,
            direct_table: Some(TableId(0)),
            colors: MeterColors {
                green: 0x44,
                yellow: 0x55,
                red: 0x66,
            },
            bytes: ByteAccounting::default(),
        },
    ]
}

/// Configures every meter cell with rates a packet every [`TICK_NS`] overruns now and then:
/// green, yellow and red all come out.
fn configure_meters(st: &mut PipeState) {
    use crate::externs::meter::MeterConfig;
    let cfg = [
        // Bytes: 1 kB/s committed, 2 kB/s peak, bursts of 60 and 120 bytes.
        MeterConfig {
            cir: 1_000,
            pir: 2_000,
            cbs: 60,
            pbs: 120,
        },
        // Packets: 20/s committed, 40/s peak, bursts of 1 and 2.
        MeterConfig {
            cir: 20,
            pir: 40,
            cbs: 1,
            pbs: 2,
        },
    ];
    for (m, c) in st.rt.meters.iter_mut().zip(cfg) {
        for i in 0..m.len() as u32 {
            m.configure(i, c, 0).expect("meter config");
        }
    }
}

/// Time between two packets of a differential run.
const TICK_NS: u64 = 10_000_000;

/// Entries keyed on the small value pools the packets draw from, so lookups hit and miss.
fn fill(st: &mut PipeState, r: &mut Rng) {
    let call = |r: &mut Rng| ActionCall {
        action: ActionId(r.below(3) as u32),
        args: vec![
            r.next() as Value & 0xffff,
            r.below(512) as Value,
            r.next() as Value,
        ],
    };
    for v in 0..4u128 {
        let c = call(r);
        st.tables[0]
            .table
            .insert(&[KeyMatch::Exact(v)], None, c)
            .expect("exact entry");
        let c = call(r);
        let value = 0x0a00_0000 | (v << 8);
        st.tables[1]
            .table
            .insert(
                &[KeyMatch::Lpm {
                    value,
                    prefix_len: 24,
                }],
                None,
                c,
            )
            .expect("lpm entry");
        let c = call(r);
        st.tables[2]
            .table
            .insert(
                &[
                    KeyMatch::Ternary {
                        value: v + 5,
                        mask: 0xff,
                    },
                    KeyMatch::Range { lo: 0, hi: 0x7fff },
                ],
                Some(v as u32),
                c,
            )
            .expect("ternary entry");
    }
}

fn packet(r: &mut Rng) -> Vec<u8> {
    let mut p: Vec<u8> = (0..r.pick(&[10, 30, 40, 60]))
        .map(|_| r.next() as u8)
        .collect();
    if p.len() >= 34 {
        let ty: u16 = r.pick(&[0x0800, 0x0800, 0x0800, 0x0806, 0x0842]);
        p[12..14].copy_from_slice(&ty.to_be_bytes());
        p[14] = if r.chance(80) { 0x45 } else { p[14] };
        p[22] = r.pick(&[0, 1, 64]); // ttl
        p[23] = r.pick(&[6, 17, 5, 7]); // proto
        p[30..34].copy_from_slice(&[10, 0, r.below(5) as u8, 1]);
        p[3] = r.below(5) as u8;
    }
    p
}

/// One random program's passes on the engine `run_gress` picks for `eng`, or on the flat
/// program (`flat`), against the tree interpreter; `traced`: both traced, and the traces
/// identical event by event.
fn differential(eng_native: bool, flat: bool, traced: bool, seed: u64, programs: usize) {
    differential_with(eng_native, flat, traced, false, seed, programs);
}

/// A register of [`add_registers`]: size (6 and 16 are not powers of two), width, paired,
/// direct (on `t_exact`).
const REGISTERS: [(u32, u16, bool, bool); 4] = [
    (6, 16, false, false),
    (4, 32, true, false),
    (8, 8, false, true),
    (16, 64, false, false),
];

/// Gives a random program registers ([`REGISTERS`]) with two RegisterActions each (random
/// bodies: `if`s on the words, fields and action data, signed and unsigned; writes of both
/// words and `rv`), and `execute`s of them in the control and in the table actions (indices
/// from fields, often out of range; the same register now and then twice in a pass, which
/// faults).
fn add_registers(prog: &mut Program, r: &mut Rng) {
    let pl = &mut prog.pipelines[0];
    let mut g = Gen {
        r,
        fields: fields(),
        params: vec![16, 9, 48],
    };
    for (i, (size, width, paired, direct)) in REGISTERS.into_iter().enumerate() {
        pl.registers.push(Register {
            name: format!("r{i}"),
            gress: Gress::Ingress,
            size,
            width,
            paired,
            word_names: None,
            initial_lo: g.r.next() as Value,
            initial_hi: g.r.next() as Value,
            direct_table: direct.then_some(TableId(0)),
            stage: 0,
        });
        for k in 0..2 {
            let body = g.ra_block(width, paired, 2);
            pl.register_actions.push(RegisterAction {
                name: format!("ra{i}_{k}"),
                register: RegisterId(i as u32),
                body,
                output_width: g.r.pick(&[width, width / 2, 1]),
                wide: false,
                overflow: None,
                underflow: None,
            });
        }
    }
    let fs = fields();
    // In actions, half the time an action of the direct register (a table's hit gives it
    // the matched entry's cell).
    let execute = |g: &mut Gen, in_action: bool| {
        let ra = if in_action && g.r.chance(50) {
            4 + g.r.below(2) as u32
        } else {
            g.r.below(2 * REGISTERS.len() as u64) as u32
        };
        let f = g.r.pick(&fs[15..21]);
        let iw = g.r.pick(&[3, 8, 16, 32]);
        let index = g.expr(iw, 1);
        Stmt::Assign {
            dst: Place::Field(f),
            value: Expr::RegisterExecute {
                action: RegisterActionId(ra),
                index: Box::new(index),
                width: f.width,
            },
        }
    };
    g.params = vec![];
    for _ in 0..2 {
        let at = g.r.below(pl.ingress.control.body.len() as u64 + 1) as usize;
        let s = execute(&mut g, false);
        pl.ingress.control.body.insert(at, s);
    }
    g.params = vec![16, 9, 48];
    for a in pl.actions.iter_mut().skip(1) {
        let at = g.r.below(a.body.len() as u64 + 1) as usize;
        let s = execute(&mut g, true);
        a.body.insert(at, s);
    }
}

impl Gen<'_> {
    /// An operand in a RegisterAction body of a `width`-bit register.
    fn ra_leaf(&mut self, width: u16, paired: bool) -> Expr {
        let hi = if paired { RegWord::Hi } else { RegWord::Lo };
        match self.r.below(7) {
            0 | 1 => Expr::RegValue(RegWord::Lo),
            2 => Expr::RegValue(hi),
            3 => Expr::RegInput(self.r.pick(&[RegWord::Lo, hi])),
            4 | 5 => self.leaf(width),
            _ => Expr::constant(self.r.below(4).into(), width),
        }
    }

    fn ra_expr(&mut self, width: u16, paired: bool, depth: u32) -> Expr {
        if depth == 0 || self.r.chance(40) {
            return self.ra_leaf(width, paired);
        }
        let op = self.r.pick(&[
            BinOp::Add,
            BinOp::Sub,
            BinOp::SatAdd,
            BinOp::SatSub,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
            BinOp::Min,
            BinOp::Max,
        ]);
        let signed = self.r.chance(20) && !matches!(op, BinOp::SatAdd | BinOp::SatSub);
        Expr::Binary {
            op,
            a: Box::new(self.ra_expr(width, paired, depth - 1)),
            b: Box::new(self.ra_expr(width, paired, depth - 1)),
            width,
            signed,
        }
    }

    /// A RegisterAction body: writes of the words and `rv`, `if`s on them.
    fn ra_block(&mut self, width: u16, paired: bool, depth: u32) -> Block {
        let n = 1 + self.r.below(3);
        (0..n)
            .map(|_| {
                if depth > 0 && self.r.chance(40) {
                    let op = self.r.pick(&[BinOp::Lt, BinOp::Ge, BinOp::Eq, BinOp::Ne]);
                    let cond = Expr::Binary {
                        op,
                        a: Box::new(self.ra_expr(width, paired, 2)),
                        b: Box::new(self.ra_leaf(width, paired)),
                        width: 1,
                        signed: self.r.chance(40),
                    };
                    return Stmt::If {
                        cond,
                        then: self.ra_block(width, paired, depth - 1),
                        els: self.ra_block(width, paired, depth - 1),
                        stage: 0,
                    };
                }
                let dst = match self.r.below(4) {
                    0 => Place::RegValue(RegWord::Hi),
                    1 => Place::RegOutput,
                    _ => Place::RegValue(RegWord::Lo),
                };
                Stmt::Assign {
                    dst,
                    value: self.ra_expr(width, paired, 2),
                }
            })
            .collect()
    }
}

/// As [`differential`]; `regs`: the programs have registers ([`add_registers`]), and the
/// registers' cells and the native code's coverage of them are checked too.
fn differential_with(
    eng_native: bool,
    flat: bool,
    traced: bool,
    regs: bool,
    seed: u64,
    programs: usize,
) {
    let mut r = Rng(seed);
    #[cfg_attr(not(feature = "native"), allow(unused_mut))]
    let mut in_place = 0;
    let mut seen = std::collections::BTreeSet::new();
    // Passes that accessed a register, and passes that faulted on a second access.
    let mut seen_regs = (0usize, 0usize);
    let mut effects = Seen::default();
    for _ in 0..programs {
        let mut prog = program(&mut r);
        if regs {
            add_registers(&mut prog, &mut r);
        }
        let prog = Arc::new(prog);
        let pl = &prog.pipelines[0];
        let kind = if eng_native {
            EngineKind::Native
        } else {
            EngineKind::Flat
        };
        let eng = Engines::with_engine(pl, kind);
        assert_eq!(eng.engine(), kind, "{:?}", eng.native_error);
        if traced {
            assert_eq!(eng.traced_engine(pl), kind);
        }
        #[cfg(feature = "native")]
        if let Some(n) = &eng.native {
            in_place += usize::from(n.ingress.parses_in_place());
            // The forwarding code has no trace point; its traced variant has them.
            assert_eq!(n.trace_points, 0);
            // Every register action of these programs is generated in line.
            assert!(
                !n.fallback_kinds.iter().any(|k| k.0.contains("Register")),
                "{:?}",
                n.fallback_kinds
            );
            if traced {
                let t = eng
                    .native_traced(pl)
                    .expect("native")
                    .as_ref()
                    .expect("traced");
                assert!(t.trace_points > 0);
            }
        }
        let mut st = [
            PipeState::new(&prog, 0, 7).expect("state"),
            PipeState::new(&prog, 0, 7).expect("state"),
        ];
        let seed = r.next();
        for s in st.iter_mut() {
            fill(s, &mut Rng(seed));
            configure_meters(s);
        }
        let mut work = [GressWork::new(&pl.ingress), GressWork::new(&pl.ingress)];
        for i in 0..40 {
            let pkt = packet(&mut r);
            let inp = ingress_input(&pkt, 5 + i * TICK_NS);
            let [s0, s1] = &mut st;
            let [w0, w1] = &mut work;
            let ig = Gress::Ingress;
            let (mut ta, mut tb) = (Recorder::new(), Recorder::new());
            let (a, b) = if traced {
                let a = run_gress(pl, &eng, ig, s0, w0, &inp, &mut ta);
                (a, run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut tb))
            } else if flat {
                let a = run_gress_flat(pl, &eng, ig, s0, w0, &inp);
                (a, run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut NoTrace))
            } else {
                let a = run_gress(pl, &eng, ig, s0, w0, &inp, &mut NoTrace);
                (a, run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut NoTrace))
            };
            assert_eq!(a, b, "{pl:#?}\n{pkt:02x?}");
            let accessed = s1.rt.reg_stamp.contains(&s1.rt.epoch);
            seen_regs.0 += usize::from(accessed);
            seen_regs.1 += usize::from(matches!(
                b.drop,
                Some(crate::exec::gress::PassDrop::Program(
                    crate::exec::ProgramError::DoubleRegisterAccess { .. }
                ))
            ));
            assert_eq!(ta.events, tb.events, "{pl:#?}\n{pkt:02x?}");
            seen.extend(tb.events.iter().map(|e| e.kind()));
            assert_eq!(w0.out, w1.out, "{pl:#?}\n{pkt:02x?}");
            assert_eq!(w0.phv.bytes(), w1.phv.bytes(), "{pl:#?}\n{pkt:02x?}");
            for h in 0..2 {
                assert_eq!(w0.phv.is_valid(h), w1.phv.is_valid(h));
            }
            same_effects(&w0.effects, &w1.effects, pl, &pkt);
            effects.digests += w1.effects.digests.len();
            effects.mirrors += usize::from(w1.effects.mirror.is_some());
        }
        same_meters(&st[0], &st[1]);
        assert_eq!(
            st[0].rt.counters[0].packets(),
            st[1].rt.counters[0].packets()
        );
        assert_eq!(st[0].rt.counters[0].bytes(), st[1].rt.counters[0].bytes());
        for (x, y) in st[0].tables.iter().zip(st[1].tables.iter()) {
            assert_eq!(
                (x.hits.get(), x.misses.get()),
                (y.hits.get(), y.misses.get())
            );
        }
        assert_eq!(work[0].stats, work[1].stats);
        for (x, y) in st[0].rt.registers.iter().zip(st[1].rt.registers.iter()) {
            assert_eq!((&x.lo, &x.hi), (&y.lo, &y.hi));
        }
        assert_eq!(st[0].rt.reg_stamp, st[1].rt.reg_stamp);
    }
    // Traced, the programs reach every trace point of a pass the tree interpreter has (but
    // registers and `drop_ctl`, which they lack: the bundled programs have those).
    if traced {
        for k in [
            "ParserState",
            "Extract",
            "ParserError",
            "ParserAccept",
            "ParserReject",
            "Gateway",
            "Table",
            "Action",
            "Exit",
            "Digest",
            "Deparsed",
        ] {
            assert!(seen.contains(k), "no {k} event: {seen:?}");
        }
    }
    if regs {
        // The passes ran register actions, and some of them faulted on a second access.
        assert!(seen_regs.0 > 0 && seen_regs.1 > 0, "{seen_regs:?}");
        if traced {
            assert!(seen.contains("Register"), "{seen:?}");
        }
    }
    // The programs' deparsers packed digests and asked for mirror copies.
    assert!(
        effects.digests > programs && effects.mirrors > programs,
        "{effects:?}"
    );
    // Native code parses the packet in place in most of these programs.
    assert!(
        !eng_native || flat || in_place > programs / 2,
        "{in_place} of {programs}"
    );
}

/// Digests and mirror requests a differential run saw (on the reference).
#[derive(Debug, Default)]
struct Seen {
    digests: usize,
    mirrors: usize,
}

/// The pass's digests, mirror request (session and header bytes), resubmit and
/// true-egress updates are the same.
fn same_effects(a: &crate::exec::Effects, b: &crate::exec::Effects, pl: &Pipeline, pkt: &[u8]) {
    let why = || format!("{pl:#?}\n{pkt:02x?}");
    assert_eq!(a.digests, b.digests, "{}", why());
    assert_eq!(a.mirror, b.mirror, "{}", why());
    assert_eq!(a.mirror_header, b.mirror_header, "{}", why());
    assert_eq!(a.resubmit, b.resubmit, "{}", why());
    assert_eq!(a.resubmit_data, b.resubmit_data, "{}", why());
    assert_eq!(a.true_egress, b.true_egress, "{}", why());
    assert_eq!(a.pktgen_data, b.pktgen_data, "{}", why());
}

/// Every meter cell (configuration and both buckets) is the same.
fn same_meters(a: &PipeState, b: &PipeState) {
    assert_eq!(a.rt.meters.len(), b.rt.meters.len());
    for (x, y) in a.rt.meters.iter().zip(b.rt.meters.iter()) {
        assert_eq!(x.len(), y.len());
        for i in 0..x.len() as u32 {
            assert_eq!(x.get(i), y.get(i), "meter cell {i}");
        }
    }
}

#[test]
fn flat_program_matches_tree_interpreter_on_random_programs() {
    differential(false, false, false, 0x5eed_1234_abcd_ef01, 150);
}

#[test]
fn flat_program_traces_like_tree_interpreter_on_random_programs() {
    differential(false, false, true, 0x7ace_1234_abcd_ef02, 150);
}

#[test]
fn flat_program_matches_tree_interpreter_even_when_native_code_exists() {
    differential(
        cfg!(feature = "native"),
        true,
        false,
        0x0ddc_0ffe_e15b_ad00,
        40,
    );
}

#[cfg(feature = "native")]
#[test]
fn native_code_matches_tree_interpreter_on_random_programs() {
    differential(true, false, false, 0x5eed_1234_abcd_ef01, 150);
    differential(true, false, false, 0x7a11_ca75_0b0e_5eed, 150);
}

/// Register actions (conditions, both branches, both words, `rv`, wrapped indices, a second
/// access's fault, a direct register on hit and miss): the flat program and the native code
/// (generated in line) against the tree interpreter, the registers' cells included.
#[test]
fn flat_program_runs_registers_like_tree_interpreter() {
    differential_with(false, false, false, true, 0x4e61_0001_5a10_0001, 60);
}

#[cfg(feature = "native")]
#[test]
fn native_code_runs_registers_like_tree_interpreter() {
    differential_with(true, false, false, true, 0x4e61_0001_5a10_0001, 80);
    differential_with(true, false, false, true, 0x7e9a_11ce_0b0e_0002, 80);
}

/// Traced, register actions record the tree interpreter's events (their gateways and the
/// `Register` access), event by event.
#[cfg(feature = "native")]
#[test]
fn native_traced_code_traces_registers_like_tree_interpreter() {
    differential_with(true, false, true, true, 0x4e61_0001_5a10_0003, 80);
}

/// The traced variant of the native code records the tree interpreter's events, event by
/// event, and computes the same packet.
#[cfg(feature = "native")]
#[test]
fn native_traced_code_traces_like_tree_interpreter_on_random_programs() {
    differential(true, false, true, 0x5eed_1234_abcd_ef01, 150);
    differential(true, false, true, 0x7a11_ca75_0b0e_5eed, 150);
}

/// Native code never runs on a PHV smaller than the one it was generated for (a `GressWork` of
/// another program): the pass runs on the flat engine instead, with the same results.
#[cfg(feature = "native")]
#[test]
fn native_code_never_runs_on_a_phv_it_does_not_fit() {
    let mut r = Rng(0x51a1_1f17_0000_0001);
    let prog = Arc::new(program(&mut r));
    let pl = &prog.pipelines[0];
    let eng = Engines::with_engine(pl, EngineKind::Native);
    assert_eq!(eng.engine(), EngineKind::Native);
    let mut small = pl.ingress.clone();
    small.phv.bytes = 2;
    small.phv.headers.truncate(1);
    let mut st = [
        PipeState::new(&prog, 0, 7).expect("state"),
        PipeState::new(&prog, 0, 7).expect("state"),
    ];
    let mut work = [GressWork::new(&small), GressWork::new(&small)];
    for _ in 0..20 {
        let pkt = packet(&mut r);
        let inp = ingress_input(&pkt, 5);
        let [s0, s1] = &mut st;
        let [w0, w1] = &mut work;
        let ig = Gress::Ingress;
        let a = run_gress(pl, &eng, ig, s0, w0, &inp, &mut NoTrace);
        let b = run_gress_flat(pl, &eng, ig, s1, w1, &inp);
        assert_eq!(a, b);
        assert_eq!(w0.out, w1.out);
        assert_eq!(w0.phv.bytes(), w1.phv.bytes());
    }
}

/// A program whose every pass meters (t_exact's direct meter in every action; the indexed
/// meter at an index from the packet, mostly past its size, and at a constant index with a
/// pre-colour), packs more digests than a pass keeps (odd widths, past 64 bits) and asks for
/// a mirror copy with a header of odd widths.
fn extern_program(r: &mut Rng) -> Program {
    let mut prog = program(r);
    let pl = &mut prog.pipelines[0];
    let fs = fields();
    let fld = |i: usize| Expr::Field(fs[i]);
    let meter = |m: u32, index: Option<Expr>, color: Option<Expr>| Expr::MeterExecute {
        meter: MeterId(m),
        index: index.map(Box::new),
        color: color.map(Box::new),
    };
    let set = |i: usize, value: Expr| Stmt::Assign {
        dst: Place::Field(fs[i]),
        value,
    };
    for (a, act) in pl.actions.iter_mut().enumerate() {
        let color = (a == 2).then(|| fld(8));
        act.body = vec![set(5, meter(1, None, color))];
    }
    pl.ingress.control.body = vec![
        Stmt::ApplyTable {
            table: TableId(0),
            branches: TableBranches::None,
        },
        set(
            17,
            Expr::Cast {
                arg: Box::new(meter(0, Some(fld(7)), None)),
                width: 32,
                sign_extend: false,
            },
        ),
        set(16, meter(0, Some(Expr::constant(2, 8)), Some(fld(8)))),
    ];
    let mut deparser = vec![pl.ingress.deparser.body[0].clone()];
    for k in 0..(MAX_DIGESTS_PER_PASS + 2) {
        deparser.push(Stmt::DigestPack {
            digest: DigestId(k as u32 % 2),
            fields: match k % 2 {
                0 => vec![fld(5), fld(16), fld(17), fld(9), fld(21)],
                _ => vec![fld(18), fld(0), fld(8)],
            },
        });
    }
    deparser.push(Stmt::MirrorEmit {
        session: fld(20),
        header: vec![fld(19), fld(9), fld(14), fld(21), fld(8)],
    });
    deparser.extend([Stmt::Emit(HeaderId(ETH)), Stmt::Emit(HeaderId(IP))]);
    pl.ingress.deparser.body = deparser;
    prog
}

use crate::exec::deparser::MAX_DIGESTS_PER_PASS;

/// [`extern_program`] on `kind` (traced: both traced, the traces identical) against the tree
/// interpreter, bit for bit: packets, PHV, digests, mirror requests, statistics (index wraps,
/// digest overflow) and every meter cell; the three colours of both meters come out.
fn extern_differential(kind: EngineKind, traced: bool) {
    let mut r = Rng(0xd16e_5700_0000_0001);
    let prog = Arc::new(extern_program(&mut r));
    let pl = &prog.pipelines[0];
    let eng = Engines::with_engine(pl, kind);
    assert_eq!(eng.engine(), kind, "{:?}", eng.native_error);
    #[cfg(feature = "native")]
    if let Some(n) = &eng.native {
        assert_eq!(n.fallbacks, 0, "{:?}", n.fallback_kinds);
    }
    let mut st = [
        PipeState::new(&prog, 0, 7).expect("state"),
        PipeState::new(&prog, 0, 7).expect("state"),
    ];
    for s in st.iter_mut() {
        fill(s, &mut Rng(3));
        configure_meters(s);
    }
    let mut work = [GressWork::new(&pl.ingress), GressWork::new(&pl.ingress)];
    let mut colors = std::collections::BTreeSet::new();
    let mut deparsed = 0;
    let fs = fields();
    for i in 0..200 {
        let pkt = packet(&mut r);
        let inp = ingress_input(&pkt, 5 + i * TICK_NS / 2);
        let [s0, s1] = &mut st;
        let [w0, w1] = &mut work;
        let ig = Gress::Ingress;
        let (mut ta, mut tb) = (Recorder::new(), Recorder::new());
        let (a, b) = match (kind, traced) {
            (_, true) => (
                run_gress(pl, &eng, ig, s0, w0, &inp, &mut ta),
                run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut tb),
            ),
            (EngineKind::Flat, false) => (
                run_gress_flat(pl, &eng, ig, s0, w0, &inp),
                run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut NoTrace),
            ),
            _ => (
                run_gress(pl, &eng, ig, s0, w0, &inp, &mut NoTrace),
                run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut NoTrace),
            ),
        };
        assert_eq!(a, b, "{pkt:02x?}");
        assert_eq!(ta.events, tb.events, "{pkt:02x?}");
        assert_eq!(w0.out, w1.out);
        assert_eq!(w0.phv.bytes(), w1.phv.bytes());
        same_effects(&w0.effects, &w1.effects, pl, &pkt);
        // A packet the parser rejects never reaches the deparser.
        if w1.effects.digests.is_empty() {
            continue;
        }
        deparsed += 1;
        if traced {
            let digests = tb.events.iter().filter(|e| e.kind() == "Digest").count();
            assert_eq!(digests, MAX_DIGESTS_PER_PASS + 2, "every pack is traced");
        }
        assert_eq!(w1.effects.digests.len(), MAX_DIGESTS_PER_PASS);
        assert!(w1.effects.mirror.is_some());
        colors.extend([5, 16, 17].map(|i| w1.phv.get(fs[i])));
    }
    assert!(deparsed > 50, "{deparsed} of 200 passes deparsed");
    same_meters(&st[0], &st[1]);
    assert_eq!(work[0].stats, work[1].stats);
    assert!(work[1].stats.index_wraps > 0, "{:?}", work[1].stats);
    assert!(work[1].stats.digest_overflow > 0, "{:?}", work[1].stats);
    for c in [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] {
        assert!(
            colors.contains(&c),
            "colour {c:#x} never came out: {colors:x?}"
        );
    }
}

#[test]
fn flat_digests_mirrors_meters_match_tree_interpreter() {
    extern_differential(EngineKind::Flat, false);
}

#[test]
fn flat_digests_mirrors_meters_trace_like_tree_interpreter() {
    extern_differential(EngineKind::Flat, true);
}

/// Digests, mirror requests and meters run fully native (no fallback) and give the tree
/// interpreter's results bit for bit.
#[cfg(feature = "native")]
#[test]
fn native_digests_mirrors_meters_match_tree_interpreter() {
    extern_differential(EngineKind::Native, false);
}

/// The traced native code records every digest as the tree interpreter does.
#[cfg(feature = "native")]
#[test]
fn native_traced_digests_mirrors_meters_trace_like_tree_interpreter() {
    extern_differential(EngineKind::Native, true);
}

/// Native parsers count their steps only where a state can be entered twice: a parser whose
/// `skip` state loops on itself (advancing 16 bits a step: the packet runs out, or the step
/// limit ends a long one) and one whose loop advances nothing (always the step limit) end
/// every parse as the tree interpreter does — the same `ParserTimeout` or short-packet error,
/// PHV and output — and the program's own parser, with no cycle, is generated without the
/// count.
#[cfg(feature = "native")]
#[test]
fn native_parsers_with_loops_end_like_tree_interpreter() {
    let mut r = Rng(0x10_0b5e_d5ee_d001);
    let mut ends = std::collections::BTreeSet::new();
    for advance in [16u64, 0] {
        let mut prog = program(&mut r);
        let states = &mut prog.pipelines[0].ingress.parser.states;
        assert_eq!(states[2].name, "skip");
        states[2].body = vec![Stmt::Advance(Expr::constant(u128::from(advance), 32))];
        states[2].transition = Transition::Direct(NextState::State(StateId(2)));
        let prog = Arc::new(prog);
        let pl = &prog.pipelines[0];
        let eng = Engines::with_engine(pl, EngineKind::Native);
        assert_eq!(eng.engine(), EngineKind::Native, "{:?}", eng.native_error);
        let mut st = [
            PipeState::new(&prog, 0, 7).expect("state"),
            PipeState::new(&prog, 0, 7).expect("state"),
        ];
        let mut work = [GressWork::new(&pl.ingress), GressWork::new(&pl.ingress)];
        for i in 0..300 {
            let mut pkt = packet(&mut r);
            // EtherType 0x0800 and IHL 5, protocol 6: the path into `skip`.
            pkt.resize(pkt.len().max(40), 0);
            (pkt[12], pkt[13], pkt[14], pkt[23]) = (0x08, 0x00, 0x45, 6);
            if i % 3 == 0 {
                pkt.resize(700, 0x5a);
            }
            let inp = ingress_input(&pkt, 5);
            let [s0, s1] = &mut st;
            let [w0, w1] = &mut work;
            let ig = Gress::Ingress;
            let a = run_gress(pl, &eng, ig, s0, w0, &inp, &mut NoTrace);
            let b = run_gress_tree(pl, &eng, ig, s1, w1, &inp, &mut NoTrace);
            assert_eq!(a, b, "advance {advance}, packet {i}");
            assert_eq!(w0.out, w1.out);
            assert_eq!(w0.phv.bytes(), w1.phv.bytes());
            ends.insert(format!("{:?}", a.parser_err));
        }
    }
    // Both endings: the packet too short, and the step limit.
    assert_eq!(ends.len(), 2, "{ends:?}");
}

/// The generator's test for parsers that need no step count: the random programs' parser
/// (no state reachable from itself) is acyclic; a state looping on itself, or a loop through
/// two states, is not.
#[cfg(feature = "native")]
#[test]
fn native_parser_cycle_test() {
    use crate::exec::native::parser_acyclic;
    let mut prog = program(&mut Rng(7));
    let flat = |prog: &Program| Engines::with_engine(&prog.pipelines[0], EngineKind::Flat);
    assert!(parser_acyclic(&flat(&prog).flat.ingress.parser));
    let states = &mut prog.pipelines[0].ingress.parser.states;
    states[2].transition = Transition::Direct(NextState::State(StateId(2)));
    assert!(!parser_acyclic(&flat(&prog).flat.ingress.parser));
    let states = &mut prog.pipelines[0].ingress.parser.states;
    states[2].transition = Transition::Direct(NextState::State(StateId(1)));
    assert!(!parser_acyclic(&flat(&prog).flat.ingress.parser));
    let states = &mut prog.pipelines[0].ingress.parser.states;
    states[2].transition = Transition::Direct(NextState::State(StateId(9)));
    assert!(parser_acyclic(&flat(&prog).flat.ingress.parser));
}
