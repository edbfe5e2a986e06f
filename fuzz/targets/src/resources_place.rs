//! Fuzz target: arbitrary bytes decoded into a (possibly inconsistent) lowered program — tables,
//! actions, gateways, registers, RegisterActions with arbitrary bodies, ids that may point
//! nowhere — then placed on both targets by `p4::resources::place_with_warnings`. It must
//! return a report or issues, never panic or hang; a fitting program's stages must fit the
//! target and every issue must carry a message.

use pipeline::ir::*;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    /// The next byte; zero once the input is used up (so generation always ends).
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn below(&mut self, n: u8) -> u8 {
        self.u8() % n.max(1)
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
}

const OPS: [BinOp; 22] = [
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
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::LAnd,
    BinOp::LOr,
    BinOp::Min,
    BinOp::Max,
];

fn field(d: &mut Bytes) -> FieldRef {
    match d.below(10) {
        // An arbitrary (maybe absurd) field.
        9 => FieldRef {
            offset: d.u32(),
            width: u16::from(d.u8()),
        },
        i => FieldRef {
            offset: u32::from(i) * 32,
            width: [1, 8, 16, 32, 48, 64, 128, 9, 3][usize::from(i)],
        },
    }
}

fn expr(d: &mut Bytes, depth: u32) -> Expr {
    let leaf = depth == 0;
    match if leaf { d.below(4) } else { d.below(18) } {
        0 => Expr::Const {
            value: u128::from(d.u32()),
            width: u16::from(d.u8()),
        },
        1 => Expr::Field(field(d)),
        2 => {
            let w = if d.below(2) == 0 {
                RegWord::Lo
            } else {
                RegWord::Hi
            };
            if d.below(2) == 0 {
                Expr::RegValue(w)
            } else {
                Expr::RegInput(w)
            }
        }
        3 => Expr::Param {
            index: u16::from(d.u8()),
            width: 32,
        },
        4 => Expr::Valid(HeaderId(u32::from(d.below(4)))),
        5..=7 => Expr::Binary {
            op: OPS[usize::from(d.below(OPS.len() as u8))],
            a: Box::new(expr(d, depth - 1)),
            b: Box::new(expr(d, depth - 1)),
            width: u16::from(d.u8()),
            signed: d.below(2) == 1,
        },
        8 => Expr::Unary {
            op: [UnOp::Not, UnOp::Neg, UnOp::LNot][usize::from(d.below(3))],
            arg: Box::new(expr(d, depth - 1)),
            width: 32,
        },
        9 => Expr::Slice {
            arg: Box::new(expr(d, depth - 1)),
            hi: u16::from(d.u8()),
            lo: u16::from(d.u8()),
        },
        10 => Expr::Ternary {
            cond: Box::new(expr(d, depth - 1)),
            then: Box::new(expr(d, depth - 1)),
            els: Box::new(expr(d, depth - 1)),
            width: 32,
        },
        11 => Expr::RegisterExecute {
            action: RegisterActionId(u32::from(d.below(7))),
            index: Box::new(expr(d, depth - 1)),
            width: u16::from(d.u8()),
        },
        12 => Expr::Hash {
            hash: HashId(u32::from(d.below(3))),
            inputs: vec![expr(d, depth - 1)],
            width: u16::from(d.u8()),
        },
        13 => Expr::MeterExecute {
            meter: MeterId(u32::from(d.below(3))),
            index: Some(Box::new(expr(d, depth - 1))),
            color: None,
        },
        14 => Expr::Cast {
            arg: Box::new(expr(d, depth - 1)),
            width: u16::from(d.u8()),
            sign_extend: false,
        },
        15 => Expr::SaluPredicate {
            conds: (0..d.below(6)).map(|_| expr(d, depth - 1)).collect(),
            width: u16::from(d.u8()),
        },
        16 => Expr::SaluCounter {
            register: RegisterId(u32::from(d.below(3))),
            op: [
                CounterOp::Log {
                    stop_when_full: d.below(2) == 1,
                },
                CounterOp::Enqueue,
                CounterOp::Dequeue,
                CounterOp::Push,
                CounterOp::Pop,
            ][usize::from(d.below(5))],
        },
        _ => Expr::Random { width: 16 },
    }
}

fn block(d: &mut Bytes, depth: u32) -> Vec<Stmt> {
    (0..d.below(5)).map(|_| stmt(d, depth)).collect()
}

fn stmt(d: &mut Bytes, depth: u32) -> Stmt {
    let choice = if depth == 0 { d.below(6) } else { d.below(10) };
    match choice {
        0 | 1 => Stmt::Assign {
            dst: match d.below(5) {
                0 => Place::RegValue(RegWord::Lo),
                1 => Place::RegOutput,
                2 => Place::FieldSlice {
                    field: field(d),
                    hi: u16::from(d.u8()),
                    lo: u16::from(d.u8()),
                },
                _ => Place::Field(field(d)),
            },
            value: expr(d, 3),
        },
        2 => Stmt::CallAction {
            action: ActionId(u32::from(d.below(10))),
            args: Vec::new(),
        },
        3 => Stmt::Count {
            counter: CounterId(u32::from(d.below(3))),
            index: expr(d, 1),
        },
        4 => Stmt::SetValid {
            header: HeaderId(u32::from(d.below(4))),
            valid: true,
        },
        5 => Stmt::Exit,
        6 | 7 => Stmt::If {
            cond: expr(d, 3),
            then: block(d, depth - 1),
            els: block(d, depth - 1),
            stage: 0,
        },
        _ => Stmt::ApplyTable {
            table: TableId(u32::from(d.below(10))),
            branches: match d.below(3) {
                0 => TableBranches::None,
                1 => TableBranches::HitMiss {
                    hit: block(d, depth - 1),
                    miss: block(d, depth - 1),
                },
                _ => TableBranches::ActionRun {
                    cases: vec![(ActionId(u32::from(d.below(8))), block(d, depth - 1))],
                    default: block(d, depth - 1),
                },
            },
        },
    }
}

fn gress(d: &mut Bytes) -> GressProgram {
    let headers = (0..3u32)
        .map(|i| HeaderInfo {
            name: format!("hdr.h{i}"),
            type_name: "h_t".into(),
            byte_offset: 100 + i * 8,
            byte_len: 8,
            fields: 0..0,
        })
        .collect();
    GressProgram {
        phv: PhvLayout {
            bytes: 200,
            fields: vec![FieldInfo {
                name: "meta.a".into(),
                field: FieldRef {
                    offset: 0,
                    width: 32,
                },
                signed: false,
            }],
            headers,
            stacks: Vec::new(),
            varbits: Vec::new(),
        },
        prefix: PrefixLayout::default(),
        intrinsics: IntrinsicBindings::default(),
        parser: Parser {
            name: "P".into(),
            start: StateId(0),
            states: Vec::new(),
        },
        control: Control {
            name: "C".into(),
            body: block(d, 3),
        },
        deparser: Control {
            name: "D".into(),
            body: Vec::new(),
        },
    }
}

fn program(d: &mut Bytes) -> Program {
    let actions = (0..d.below(8))
        .map(|i| Action {
            name: format!("a{i}"),
            params: vec![ActionParam {
                name: "p".into(),
                width: u16::from(d.u8()),
            }],
            body: block(d, 1),
        })
        .collect();
    let tables = (0..d.below(8))
        .map(|i| Table {
            name: format!("t{i}"),
            gress: Gress::Ingress,
            keys: (0..d.below(4))
                .map(|_| TableKey {
                    name: "k".into(),
                    expr: expr(d, 1),
                    kind: [
                        MatchKind::Exact,
                        MatchKind::Ternary,
                        MatchKind::Lpm,
                        MatchKind::Range,
                    ][usize::from(d.below(4))],
                })
                .collect(),
            actions: (0..d.below(4))
                .map(|_| ActionRef {
                    action: ActionId(u32::from(d.below(10))),
                    default_only: false,
                    table_only: false,
                })
                .collect(),
            default_action: ActionCall {
                action: ActionId(0),
                args: Vec::new(),
            },
            default_action_const: false,
            const_entries: Vec::new(),
            entries_const: false,
            size: d.u32(),
            direct_counter: None,
            direct_meter: None,
            idle_timeout: false,
            stage: 0,
            hidden: false,
        })
        .collect();
    let registers = (0..d.below(4))
        .map(|i| Register {
            name: format!("r{i}"),
            gress: Gress::Ingress,
            size: d.u32(),
            width: [1, 8, 16, 32, 64, 7][usize::from(d.below(6))],
            paired: d.below(2) == 1,
            word_names: None,
            initial_lo: 0,
            initial_hi: 0,
            direct_table: None,
            stage: 0,
        })
        .collect();
    let register_actions = (0..d.below(6))
        .map(|i| RegisterAction {
            name: format!("ra{i}"),
            register: RegisterId(u32::from(d.below(5))),
            body: block(d, 2),
            output_width: u16::from(d.u8()),
            wide: false,
            overflow: None,
            underflow: None,
        })
        .collect();
    let ingress = gress(d);
    let egress = gress(d);
    Program {
        name: "fuzz".into(),
        target: Target::Tofino1,
        pipelines: vec![Pipeline {
            name: "pipe".into(),
            ingress,
            egress,
            tables,
            actions,
            registers,
            register_actions,
            register_params: Vec::new(),
            hashes: Vec::new(),
            counters: vec![Counter {
                name: "c".into(),
                kind: CounterKind::PacketsAndBytes,
                size: 1024,
                direct_table: None,
                bytes: Default::default(),
            }],
            meters: Vec::new(),
            checksums: Vec::new(),
            digests: Vec::new(),
            action_profiles: Vec::new(),
            value_sets: Vec::new(),
            filters: Vec::new(),
            ghost: None,
        }],
        pipe_map: vec![0],
        errors: ErrorEnum::default(),
    }
}

/// One input.
pub fn run(data: &[u8]) {
    let mut d = Bytes(data);
    let original = program(&mut d);
    for target in [Target::Tofino1, Target::Tofino2] {
        let mut p = original.clone();
        match p4::resources::place_with_warnings(&mut p, target) {
            Ok((report, _)) => {
                for pr in &report.pipelines {
                    for g in &pr.gresses {
                        assert!(g.stages_used <= u32::from(target.stages()));
                    }
                }
                let _ = report.to_string();
                let _ = report.to_json();
            }
            Err(issues) => {
                assert!(issues.iter().any(|i| i.is_error()));
                assert!(issues.iter().all(|i| !i.message.is_empty()));
            }
        }
    }
}
