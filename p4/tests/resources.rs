//! Tests of the Tofino resource check on hand-built IR: stage placement along known dependency
//! chains, and each constraint error (stages, register accesses, SALU, gateways, crossbar,
//! memories) with its kind and the object it points at.

use p4::diag::Severity;
use p4::resources::{place, place_with_warnings, IssueKind, ObjectRef, ResourceIssue};
use pipeline::ir::*;

/// Metadata fields `meta.f0..meta.f63`, 32 bits each, plus `meta.w0..meta.w9`, 128 bits each.
fn phv() -> PhvLayout {
    let mut fields = Vec::new();
    for i in 0..64u32 {
        fields.push(FieldInfo {
            name: format!("meta.f{i}"),
            field: fld(i),
            signed: false,
        });
    }
    for i in 0..10u32 {
        fields.push(FieldInfo {
            name: format!("meta.w{i}"),
            field: wide(i),
            signed: false,
        });
    }
    PhvLayout {
        bytes: 64 * 4 + 10 * 16,
        fields,
        headers: Vec::new(),
        stacks: Vec::new(),
        varbits: Vec::new(),
    }
}

fn fld(i: u32) -> FieldRef {
    FieldRef {
        offset: i * 32,
        width: 32,
    }
}

fn wide(i: u32) -> FieldRef {
    FieldRef {
        offset: 64 * 32 + i * 128,
        width: 128,
    }
}

fn f(i: u32) -> Expr {
    Expr::Field(fld(i))
}

fn c(v: u128) -> Expr {
    Expr::Const {
        value: v,
        width: 32,
    }
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    let width = match op {
        BinOp::Eq
        | BinOp::Ne
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge
        | BinOp::LAnd
        | BinOp::LOr => 1,
        _ => 32,
    };
    Expr::Binary {
        op,
        a: Box::new(a),
        b: Box::new(b),
        width,
        signed: false,
    }
}

fn set(i: u32, value: Expr) -> Stmt {
    Stmt::Assign {
        dst: Place::Field(fld(i)),
        value,
    }
}

fn apply(t: TableId) -> Stmt {
    Stmt::ApplyTable {
        table: t,
        branches: TableBranches::None,
    }
}

fn if_(cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then,
        els,
        stage: 0,
    }
}

fn gress() -> GressProgram {
    GressProgram {
        phv: phv(),
        prefix: PrefixLayout::default(),
        intrinsics: IntrinsicBindings::default(),
        parser: Parser {
            name: "P".into(),
            start: StateId(0),
            states: vec![ParserState {
                name: "P.start".into(),
                body: Vec::new(),
                transition: Transition::Direct(NextState::Accept),
            }],
        },
        control: Control {
            name: "Ingress".into(),
            body: Vec::new(),
        },
        deparser: Control {
            name: "D".into(),
            body: Vec::new(),
        },
    }
}

/// Builds one pipeline by hand.
struct B {
    pipe: Pipeline,
}

impl B {
    fn new() -> B {
        B {
            pipe: Pipeline {
                name: "pipe".into(),
                ingress: gress(),
                egress: gress(),
                tables: Vec::new(),
                actions: vec![Action {
                    name: "NoAction".into(),
                    params: Vec::new(),
                    body: Vec::new(),
                }],
                registers: Vec::new(),
                register_actions: Vec::new(),
                register_params: Vec::new(),
                hashes: Vec::new(),
                counters: Vec::new(),
                meters: Vec::new(),
                checksums: Vec::new(),
                digests: Vec::new(),
                action_profiles: Vec::new(),
                value_sets: Vec::new(),
                filters: Vec::new(),
                ghost: None,
            },
        }
    }

    fn action(&mut self, name: &str, body: Vec<Stmt>) -> ActionId {
        self.pipe.actions.push(Action {
            name: name.into(),
            params: Vec::new(),
            body,
        });
        ActionId(self.pipe.actions.len() as u32 - 1)
    }

    fn table_kind(
        &mut self,
        name: &str,
        keys: Vec<(Expr, MatchKind)>,
        actions: Vec<ActionId>,
        size: u32,
    ) -> TableId {
        self.pipe.tables.push(Table {
            name: name.into(),
            gress: Gress::Ingress,
            keys: keys
                .into_iter()
                .map(|(expr, kind)| TableKey {
                    name: "k".into(),
                    expr,
                    kind,
                })
                .collect(),
            actions: actions
                .iter()
                .map(|a| ActionRef {
                    action: *a,
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
            size,
            direct_counter: None,
            direct_meter: None,
            idle_timeout: false,
            stage: 0,
            hidden: false,
        });
        TableId(self.pipe.tables.len() as u32 - 1)
    }

    /// An exact table keyed on `meta.f{key}` whose one action runs `body`.
    fn table(&mut self, name: &str, key: u32, body: Vec<Stmt>) -> TableId {
        let a = self.action(&format!("{name}_act"), body);
        self.table_kind(name, vec![(f(key), MatchKind::Exact)], vec![a], 1024)
    }

    fn register(&mut self, name: &str, width: u16) -> RegisterId {
        self.pipe.registers.push(Register {
            name: name.into(),
            gress: Gress::Ingress,
            size: 1024,
            width,
            paired: false,
            word_names: None,
            initial_lo: 0,
            initial_hi: 0,
            direct_table: None,
            stage: 0,
        });
        RegisterId(self.pipe.registers.len() as u32 - 1)
    }

    fn register_action(
        &mut self,
        name: &str,
        reg: RegisterId,
        body: Vec<Stmt>,
        output_width: u16,
    ) -> RegisterActionId {
        self.pipe.register_actions.push(RegisterAction {
            name: name.into(),
            register: reg,
            body,
            output_width,
            wide: false,
            overflow: None,
            underflow: None,
        });
        RegisterActionId(self.pipe.register_actions.len() as u32 - 1)
    }

    fn program(mut self, body: Vec<Stmt>) -> Program {
        self.pipe.ingress.control.body = body;
        Program {
            name: "test".into(),
            target: Target::Tofino1,
            pipelines: vec![self.pipe],
            pipe_map: vec![0],
            errors: ErrorEnum::default(),
        }
    }
}

fn execute(ra: RegisterActionId, width: u16) -> Expr {
    Expr::RegisterExecute {
        action: ra,
        index: Box::new(c(0)),
        width,
    }
}

fn reg_set(value: Expr) -> Stmt {
    Stmt::Assign {
        dst: Place::RegValue(RegWord::Lo),
        value,
    }
}

fn rv(value: Expr) -> Stmt {
    Stmt::Assign {
        dst: Place::RegOutput,
        value,
    }
}

fn value() -> Expr {
    Expr::RegValue(RegWord::Lo)
}

fn stage(p: &Program, name: &str) -> u8 {
    p.pipelines[0]
        .tables
        .iter()
        .find(|t| t.name == name)
        .expect("table exists")
        .stage
}

fn errors(issues: &[ResourceIssue]) -> Vec<&ResourceIssue> {
    issues
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .collect()
}

fn expect_error(p: &mut Program, target: Target, kind: IssueKind) -> Vec<ResourceIssue> {
    let issues = place(p, target).expect_err("the program must be rejected");
    assert!(
        issues.iter().any(|i| i.kind == kind && i.is_error()),
        "expected an error of kind {kind:?}, got:\n{}",
        issues
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    issues
}

#[test]
fn dependency_chains_set_the_stages() {
    let mut b = B::new();
    let t0 = b.table("t0", 0, vec![set(1, c(1))]); // writes f1
    let t1 = b.table("t1", 1, vec![set(2, c(2))]); // match dep on t0 → 1
    let t2 = b.table("t2", 10, vec![set(11, c(3))]); // independent → 0
    let t3 = b.table("t3", 12, vec![set(13, f(2))]); // action dep on t1 → 2
    let t4 = b.table("t4", 14, vec![set(11, c(4))]); // output dep on t2 → 1
    let t5 = b.table("t5", 20, vec![set(21, c(5))]); // under a gateway reading f2 → 2
    let t6 = b.table("t6", 22, vec![set(23, c(6))]); // independent → 0
                                                     // On t6's hit, reading nothing t6 writes: a control dependency only, so t6's next-table
                                                     // result predicates t7 in the same stage (bf-p4c adds stages for match, action and output
                                                     // edges only) → 0.
    let t7 = b.table("t7", 24, vec![set(25, c(7))]);
    let t8 = b.table("t8", 13, vec![set(26, c(8))]); // match on f13 (t3) → 3
    let body = vec![
        apply(t0),
        apply(t1),
        apply(t2),
        apply(t3),
        apply(t4),
        if_(bin(BinOp::Eq, f(2), c(1)), vec![apply(t5)], vec![]),
        Stmt::ApplyTable {
            table: t6,
            branches: TableBranches::HitMiss {
                hit: vec![apply(t7)],
                miss: vec![],
            },
        },
        apply(t8),
    ];
    let mut p = b.program(body);
    let report = place(&mut p, Target::Tofino1).expect("fits");
    let got: Vec<u8> = ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"]
        .iter()
        .map(|n| stage(&p, n))
        .collect();
    assert_eq!(got, vec![0, 1, 0, 2, 1, 2, 0, 0, 3]);
    match &p.pipelines[0].ingress.control.body[5] {
        Stmt::If { stage, .. } => assert_eq!(*stage, 2, "the gateway reads f2, written in stage 1"),
        other => panic!("unexpected {other:?}"),
    }
    let g = report.gress(0, "ingress").expect("ingress report");
    assert_eq!(g.stages_used, 4);
    assert_eq!(g.totals.tables, 9);
    assert_eq!(g.totals.gateways, 1);
    assert_eq!(report.gress(0, "egress").map(|g| g.stages_used), Some(0));
}

#[test]
fn anti_dependencies_share_a_stage_and_statements_take_a_slot() {
    let mut b = B::new();
    let t0 = b.table("t0", 1, vec![set(2, c(1))]);
    // Writes f1, which t0 matches on: allowed in the same stage.
    let t1 = b.table("t1", 3, vec![set(1, c(1))]);
    // A standalone statement reading f2 (written by t0) → stage 1; then a table matching
    // on what that statement wrote → stage 2.
    let t2 = b.table("t2", 5, vec![set(6, c(1))]);
    let mut p = b.program(vec![
        apply(t0),
        apply(t1),
        set(5, bin(BinOp::Add, f(2), c(1))),
        apply(t2),
    ]);
    let report = place(&mut p, Target::Tofino1).expect("fits");
    assert_eq!(
        (stage(&p, "t0"), stage(&p, "t1"), stage(&p, "t2")),
        (0, 0, 2)
    );
    let g = report.gress(0, "ingress").expect("ingress");
    assert_eq!(
        g.stages[1].tables,
        vec!["meta.f5 = meta.f2 + 1".to_string()]
    );
}

fn chain_program(n: u32) -> Program {
    let mut b = B::new();
    let mut body = Vec::new();
    for i in 0..n {
        let t = b.table(&format!("t{i}"), i, vec![set(i + 1, c(u128::from(i)))]);
        body.push(apply(t));
    }
    b.program(body)
}

#[test]
fn thirteen_stage_chain_fails_tofino1_but_fits_tofino2() {
    let mut p = chain_program(13);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::TooManyStages);
    let e = issues
        .iter()
        .find(|i| i.kind == IssueKind::TooManyStages)
        .expect("stage error");
    assert!(e.message.contains("needs 13 stages"), "{}", e.message);
    assert!(e.message.contains("tofino1 has 12"), "{}", e.message);
    assert_eq!(e.object, ObjectRef::Pipeline(0));
    // The chain names every link, from t0 to t12.
    assert!(
        e.notes.iter().any(|n| n.starts_with("stage 0: table `t0`")),
        "{:#?}",
        e.notes
    );
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("stage 12: table `t12` matches on `meta.f12`, written by `t11`")),
        "{:#?}",
        e.notes
    );
    assert!(e.help.iter().any(|h| h.contains("tofino2")));

    let mut p = chain_program(13);
    let report = place(&mut p, Target::Tofino2).expect("fits tofino2");
    assert_eq!(report.gress(0, "ingress").map(|g| g.stages_used), Some(13));
    assert_eq!(stage(&p, "t12"), 12);
    assert!(report.to_string().contains("stages used: 13 of 20"));

    let mut p = chain_program(12);
    assert!(
        place(&mut p, Target::Tofino1).is_ok(),
        "12 stages fit tofino1"
    );
}

/// 17 tables on 8-bit keys (one RAM each, addressed by the key: bf-p4c hashes no ways for a
/// key narrower than a RAM's row address), so logical tables run out before memories do.
#[test]
fn stage_capacity_spills_to_the_next_stage() {
    let mut b = B::new();
    let mut body = Vec::new();
    for i in 0..17u32 {
        let a = b.action(&format!("t{i}_act"), vec![]);
        let key = Expr::Slice {
            arg: Box::new(f(i)),
            hi: 7,
            lo: 0,
        };
        let t = b.table_kind(
            &format!("t{i}"),
            vec![(key, MatchKind::Exact)],
            vec![a],
            256,
        );
        body.push(apply(t));
    }
    let mut p = b.program(body);
    let report = place(&mut p, Target::Tofino1).expect("fits");
    let g = report.gress(0, "ingress").expect("ingress");
    assert_eq!(
        g.stages[0].logical_tables, 16,
        "16 logical tables per stage"
    );
    assert_eq!(stage(&p, "t16"), 1);
    assert_eq!(g.stages_used, 2);
}

#[test]
fn ternary_tables_and_salus_are_limited_per_stage() {
    let mut b = B::new();
    let mut body = Vec::new();
    for i in 0..9u32 {
        let a = b.action(&format!("a{i}"), vec![]);
        let t = b.table_kind(
            &format!("tern{i}"),
            vec![(f(i), MatchKind::Ternary)],
            vec![a],
            512,
        );
        body.push(apply(t));
    }
    for i in 0..5u32 {
        let r = b.register(&format!("r{i}"), 32);
        let ra = b.register_action(
            &format!("ra{i}"),
            r,
            vec![reg_set(bin(BinOp::Add, value(), c(1)))],
            0,
        );
        body.push(set(40 + i, execute(ra, 32)));
    }
    let mut p = b.program(body);
    let report = place(&mut p, Target::Tofino1).expect("fits");
    assert_eq!(stage(&p, "tern7"), 0);
    assert_eq!(stage(&p, "tern8"), 1, "8 ternary tables per stage");
    let regs: Vec<u8> = p.pipelines[0].registers.iter().map(|r| r.stage).collect();
    assert_eq!(regs, vec![0, 0, 0, 0, 1], "4 stateful ALUs per stage");
    let g = report.gress(0, "ingress").expect("ingress");
    assert_eq!(g.stages[0].stateful_alus, 4);
    assert_eq!(g.totals.registers, 5);
}

#[test]
fn register_executed_twice_on_one_path_is_an_error() {
    let mut b = B::new();
    let r = b.register("counts", 32);
    let ra1 = b.register_action("inc", r, vec![reg_set(bin(BinOp::Add, value(), c(1)))], 0);
    let ra2 = b.register_action("read", r, vec![rv(value())], 32);
    let t0 = b.table("t0", 0, vec![set(1, execute(ra1, 32))]);
    let t1 = b.table("t1", 2, vec![set(3, execute(ra2, 32))]);
    let mut p = b.program(vec![apply(t0), apply(t1)]);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::RegisterAccessedTwice);
    let e = issues
        .iter()
        .find(|i| i.kind == IssueKind::RegisterAccessedTwice)
        .expect("error");
    assert_eq!(e.object, ObjectRef::RegisterAction(0, ra2));
    assert!(
        e.message.contains("`counts`")
            && e.message.contains("`inc`")
            && e.message.contains("`read`"),
        "{}",
        e.message
    );

    // Twice in one action.
    let mut b = B::new();
    let r = b.register("r", 32);
    let ra = b.register_action("inc", r, vec![reg_set(bin(BinOp::Add, value(), c(1)))], 32);
    let t = b.table(
        "t",
        0,
        vec![set(1, execute(ra, 32)), set(2, execute(ra, 32))],
    );
    let mut p = b.program(vec![apply(t)]);
    expect_error(&mut p, Target::Tofino1, IssueKind::RegisterAccessedTwice);
}

#[test]
fn exclusive_accesses_share_the_register_stage() {
    // t1 (then) could go to stage 0, t2 (else) needs stage 1 (it matches on f1, written by
    // t0): the register's one stage is 1, and t1 is pushed there.
    let mut b = B::new();
    let r = b.register("r", 32);
    let ra1 = b.register_action("inc", r, vec![reg_set(bin(BinOp::Add, value(), c(1)))], 0);
    let ra2 = b.register_action("dec", r, vec![reg_set(bin(BinOp::Sub, value(), c(1)))], 0);
    let t0 = b.table("t0", 0, vec![set(1, c(1))]);
    let t1 = b.table("t1", 5, vec![set(6, execute(ra1, 32))]);
    let t2 = b.table("t2", 1, vec![set(7, execute(ra2, 32))]);
    let mut p = b.program(vec![
        apply(t0),
        if_(bin(BinOp::Eq, f(9), c(0)), vec![apply(t1)], vec![apply(t2)]),
    ]);
    place(&mut p, Target::Tofino1).expect("fits");
    assert_eq!(stage(&p, "t2"), 1);
    assert_eq!(stage(&p, "t1"), 1);
    assert_eq!(p.pipelines[0].registers[r.index()].stage, 1);

    // Two actions of one table are exclusive too.
    let mut b = B::new();
    let r = b.register("r", 32);
    let ra1 = b.register_action("inc", r, vec![reg_set(bin(BinOp::Add, value(), c(1)))], 0);
    let ra2 = b.register_action("clr", r, vec![reg_set(c(0))], 0);
    let a1 = b.action("a1", vec![set(1, execute(ra1, 32))]);
    let a2 = b.action("a2", vec![set(1, execute(ra2, 32))]);
    let t = b.table_kind("t", vec![(f(0), MatchKind::Exact)], vec![a1, a2], 16);
    let mut p = b.program(vec![apply(t)]);
    assert!(place(&mut p, Target::Tofino1).is_ok());
}

#[test]
fn salu_limits() {
    // Three conditions: too many for tofino1's 2 compare units, fine on tofino2's 4.
    let build = |body: Vec<Stmt>, out: u16| {
        let mut b = B::new();
        let r = b.register("r", 32);
        let ra = b.register_action("ra", r, body, out);
        let mut p = b.program(vec![set(1, execute(ra, 32))]);
        p.pipelines[0].registers[0].size = 16;
        (p, ra)
    };
    let three = vec![if_(
        bin(
            BinOp::LAnd,
            bin(
                BinOp::LAnd,
                bin(BinOp::Gt, value(), f(2)),
                bin(BinOp::Lt, value(), c(5)),
            ),
            bin(BinOp::Ne, value(), c(3)),
        ),
        vec![reg_set(c(0))],
        vec![reg_set(bin(BinOp::Add, value(), c(1)))],
    )];
    let (mut p, ra) = build(three.clone(), 0);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    let e = issues
        .iter()
        .find(|i| i.kind == IssueKind::SaluTooComplex)
        .expect("error");
    assert_eq!(e.object, ObjectRef::RegisterAction(0, ra));
    assert!(
        e.message.contains("3 conditions") && e.message.contains("2 compare units"),
        "{}",
        e.message
    );
    let (mut p, _) = build(three, 0);
    assert!(place(&mut p, Target::Tofino2).is_ok());

    // Division: tofino2 only.
    let div = vec![reg_set(bin(BinOp::Div, value(), f(2)))];
    let (mut p, _) = build(div.clone(), 0);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    assert!(issues.iter().any(|i| i.message.contains("cannot divide")));
    let (mut p, _) = build(div, 0);
    assert!(place(&mut p, Target::Tofino2).is_ok());

    // Multiplying two variables: neither.
    let (mut p, _) = build(vec![reg_set(bin(BinOp::Mul, value(), f(2)))], 0);
    let issues = expect_error(&mut p, Target::Tofino2, IssueKind::SaluTooComplex);
    assert!(issues
        .iter()
        .any(|i| i.message.contains("multiply two variables")));

    // Three PHV inputs.
    let (mut p, _) = build(
        vec![if_(bin(BinOp::Eq, f(2), f(3)), vec![reg_set(f(4))], vec![])],
        0,
    );
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    assert!(
        issues.iter().any(|i| i.message.contains("3 PHV values")),
        "{issues:#?}"
    );

    // Two operations in one instruction.
    let (mut p, _) = build(
        vec![reg_set(bin(
            BinOp::Add,
            bin(BinOp::Add, value(), f(2)),
            c(1),
        ))],
        0,
    );
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    assert!(issues
        .iter()
        .any(|i| i.message.contains("needs 2 operations")));

    // Five large constants (only 4 constant registers).
    let mut body = Vec::new();
    for k in 0..5u128 {
        body.push(if_(bin(BinOp::Eq, value(), c(100 + k)), vec![], vec![]));
    }
    let (mut p, _) = build(
        vec![rv(bin(BinOp::Add, value(), c(1000)))]
            .into_iter()
            .chain(body.into_iter().take(0))
            .collect(),
        0,
    );
    assert!(
        place(&mut p, Target::Tofino1).is_ok(),
        "one large constant is fine"
    );
    let big = vec![
        if_(
            bin(BinOp::Gt, value(), c(100)),
            vec![reg_set(bin(BinOp::Add, value(), c(200)))],
            vec![reg_set(bin(BinOp::Sub, value(), c(300)))],
        ),
        rv(bin(BinOp::Xor, value(), c(400))),
        Stmt::Assign {
            dst: Place::RegValue(RegWord::Hi),
            value: c(500),
        },
    ];
    let (mut p, _) = build(big, 0);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    assert!(
        issues.iter().any(|i| i.message.contains("5 constants")),
        "{issues:#?}"
    );

    // A 64-bit result needs two output words.
    let (mut p, _) = build(vec![rv(value())], 64);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    assert!(issues.iter().any(|i| i.message.contains("returns 64 bits")));
    let (mut p, _) = build(vec![rv(value())], 64);
    assert!(place(&mut p, Target::Tofino2).is_ok());

    // Three different values for one word.
    let (mut p, _) = build(
        vec![if_(
            bin(BinOp::Eq, value(), c(1)),
            vec![reg_set(c(2))],
            vec![if_(
                bin(BinOp::Eq, value(), c(2)),
                vec![reg_set(c(3))],
                vec![reg_set(c(4))],
            )],
        )],
        0,
    );
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::SaluTooComplex);
    assert!(
        issues
            .iter()
            .any(|i| i.message.contains("in 3 different ways")),
        "{issues:#?}"
    );

    // The common shapes pass: increment and return, max.
    let (mut p, _) = build(
        vec![reg_set(bin(BinOp::Add, value(), c(1))), rv(value())],
        32,
    );
    assert!(place(&mut p, Target::Tofino1).is_ok());
    let (mut p, _) = build(
        vec![
            if_(bin(BinOp::Lt, value(), f(2)), vec![reg_set(f(2))], vec![]),
            rv(value()),
        ],
        32,
    );
    assert!(place(&mut p, Target::Tofino1).is_ok());
}

#[test]
fn gateway_conditions() {
    let check = |cond: Expr| {
        let mut b = B::new();
        let t = b.table("t", 0, vec![]);
        let mut p = b.program(vec![
            apply(t),
            if_(
                bin(BinOp::Eq, f(9), c(1)),
                vec![],
                vec![if_(cond, vec![], vec![])],
            ),
        ]);
        place(&mut p, Target::Tofino1)
    };
    let e = check(bin(BinOp::Lt, f(1), f(2))).expect_err("two fields with <");
    let e = errors(&e)[0];
    assert_eq!(e.kind, IssueKind::GatewayTooComplex);
    assert!(
        e.message
            .contains("condition too complex, one operand of `<` must be constant"),
        "{}",
        e.message
    );
    assert_eq!(
        e.object,
        ObjectRef::Gateway {
            pipeline: 0,
            gress: Gress::Ingress,
            index: 1
        }
    );
    assert!(e.help.iter().any(|h| h.contains("sign bit")));
    assert!(check(bin(BinOp::Lt, f(1), c(5))).is_ok());
    assert!(check(bin(BinOp::Eq, f(1), f(2))).is_ok());
    assert!(check(bin(BinOp::Ne, bin(BinOp::And, f(1), c(0xff)), c(0))).is_ok());
    let e = check(bin(BinOp::Eq, bin(BinOp::And, f(1), f(2)), c(0))).expect_err("& of two fields");
    assert!(
        e[0].message.contains("one operand of `&` must be constant"),
        "{}",
        e[0].message
    );
    let e = check(bin(BinOp::Eq, bin(BinOp::Add, f(1), f(2)), c(3))).expect_err("+ in a gateway");
    assert!(e[0].message.contains("cannot compute"), "{}", e[0].message);
    // A 64-bit `==`/`!=` of a concatenation: bf-p4c's CanonGatewayExpr splits it per slice, and
    // MakeSlice slices through the `++`; a 32-bit one and an ordering stay refused.
    let cat = |hi: Expr, lo: Expr, width: u16| Expr::Concat {
        hi: Box::new(hi),
        lo: Box::new(lo),
        width,
    };
    let k64 = Expr::Const {
        value: 0x1234_0a0b_0c0d,
        width: 64,
    };
    assert!(check(bin(BinOp::Eq, cat(f(1), f(2), 64), k64.clone())).is_ok());
    assert!(check(bin(BinOp::Ne, cat(f(1), f(2), 64), k64.clone())).is_ok());
    let e = check(bin(BinOp::Gt, cat(f(1), f(2), 64), k64)).expect_err("ordering of a ++");
    assert!(e[0].message.contains("cannot compute"), "{}", e[0].message);
    let narrow = cat(
        Expr::Slice {
            arg: Box::new(f(1)),
            hi: 15,
            lo: 0,
        },
        Expr::Slice {
            arg: Box::new(f(2)),
            hi: 15,
            lo: 0,
        },
        32,
    );
    assert!(check(bin(BinOp::Eq, narrow, c(1))).is_err());
    // A register result tested in a condition runs before the gateway.
    let mut b = B::new();
    let r = b.register("r", 32);
    let ra = b.register_action("ra", r, vec![rv(value())], 32);
    let mut p = b.program(vec![if_(
        bin(BinOp::Eq, execute(ra, 32), c(1)),
        vec![set(3, c(1))],
        vec![],
    )]);
    place(&mut p, Target::Tofino1).expect("fits");
    match &p.pipelines[0].ingress.control.body[0] {
        Stmt::If { stage, .. } => assert_eq!(*stage, 1),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(p.pipelines[0].registers[0].stage, 0);
}

#[test]
fn keys_wider_than_the_crossbar() {
    let mut b = B::new();
    let a = b.action("a", vec![]);
    let keys: Vec<_> = (0..9)
        .map(|i| (Expr::Field(wide(i)), MatchKind::Exact))
        .collect();
    let t = b.table_kind("wide_exact", keys, vec![a], 16);
    let keys: Vec<_> = (0..5)
        .map(|i| (Expr::Field(wide(i)), MatchKind::Ternary))
        .collect();
    let t2 = b.table_kind("wide_ternary", keys, vec![a], 16);
    let keys: Vec<_> = (0..4)
        .map(|i| (Expr::Field(wide(i)), MatchKind::Ternary))
        .collect();
    let t3 = b.table_kind("ok_ternary", keys, vec![a], 16);
    let mut p = b.program(vec![apply(t), apply(t2), apply(t3)]);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::CrossbarTooWide);
    let wide: Vec<_> = issues
        .iter()
        .filter(|i| i.kind == IssueKind::CrossbarTooWide)
        .collect();
    assert_eq!(wide.len(), 2, "{wide:#?}");
    assert_eq!(wide[0].object, ObjectRef::Table(0, t));
    assert!(
        wide[0]
            .message
            .contains("144 exact crossbar bytes; a tofino1 stage has 128"),
        "{}",
        wide[0].message
    );
    assert_eq!(wide[1].object, ObjectRef::Table(0, t2));
    assert!(
        wide[1].message.contains("80 ternary crossbar bytes"),
        "{}",
        wide[1].message
    );
}

/// A table bigger than one stage's memories is spread over consecutive stages, as bf-p4c does:
/// 2M exact entries of a 32-bit key (bf-p4c's layout, mau/table_layout.cpp `setup_exact_match`:
/// 22 stored key bits + 4 version bits, 9 entries in a 2-RAM row, 218 rows deep: 436 SRAM
/// blocks, 6 stages of at most 80), 20k
/// ternary entries of 32 bits (40 TCAM blocks: 2 stages of 24); the table's result is in the
/// stage of its last part. On Tofino 1 no table starts while another is split over stages
/// (bf-p4c's `can_place_with_partly_placed`), so the ternary table, placed after the exact
/// one's first part, takes stages 5 and 6.
#[test]
fn tables_larger_than_a_stage_are_split_over_stages() {
    let mut b = B::new();
    let a = b.action("a", vec![]);
    let big = b.table_kind(
        "big_exact",
        vec![(f(0), MatchKind::Exact)],
        vec![a],
        2_000_000,
    );
    let tern = b.table_kind(
        "big_ternary",
        vec![(f(1), MatchKind::Ternary)],
        vec![a],
        20_000,
    );
    let ok = b.table_kind("ok_ternary", vec![(f(2), MatchKind::Lpm)], vec![a], 12_288);
    let mut p = b.program(vec![apply(big), apply(tern), apply(ok)]);
    let report = place(&mut p, Target::Tofino1).expect("split tables fit");
    let _ = (big, tern);
    assert_eq!(stage(&p, "big_exact"), 5);
    assert_eq!(stage(&p, "big_ternary"), 6);
    let g = &report.pipelines[0].gresses[0];
    let parts: Vec<&String> = g
        .stages
        .iter()
        .flat_map(|s| &s.tables)
        .filter(|t| t.starts_with("big_exact"))
        .collect();
    assert_eq!(parts.len(), 6, "{parts:?}");
    assert_eq!(parts[0], "big_exact (part 1 of 6)");
    assert!(g
        .stages
        .iter()
        .all(|s| s.sram_blocks <= 80 && s.tcam_blocks <= 24));
    // 20M entries need more stages than Tofino 1 has: refused, with the stage count.
    let mut b = B::new();
    let a = b.action("a", vec![]);
    let huge = b.table_kind("huge", vec![(f(0), MatchKind::Exact)], vec![a], 20_000_000);
    let mut p = b.program(vec![apply(huge)]);
    expect_error(&mut p, Target::Tofino1, IssueKind::TooManyStages);
}

#[test]
fn warnings_where_the_emulator_is_more_permissive() {
    let mut b = B::new();
    let r = b.register("wide", 64);
    let ra = b.register_action("ra", r, vec![rv(value())], 32);
    let t = b.table(
        "t",
        0,
        vec![set(1, bin(BinOp::Mul, f(2), f(3))), set(4, execute(ra, 32))],
    );
    let mut p = b.program(vec![apply(t)]);
    let (_, warnings) = place_with_warnings(&mut p, Target::Tofino1).expect("warnings only");
    assert!(warnings.iter().all(|w| w.severity == Severity::Warning));
    assert!(
        warnings
            .iter()
            .any(|w| w.kind == IssueKind::RegisterLayout && w.object == ObjectRef::Register(0, r)),
        "{warnings:#?}"
    );
    assert!(
        warnings.iter().any(|w| w.kind == IssueKind::EmulatorOnly
            && w.object == ObjectRef::Table(0, t)
            && w.message.contains("cannot multiply")),
        "{warnings:#?}"
    );
    // Tofino2 stores 64-bit words.
    let (_, warnings) = place_with_warnings(&mut p, Target::Tofino2).expect("fits");
    assert!(!warnings.iter().any(|w| w.kind == IssueKind::RegisterLayout));
}

#[test]
fn report_text_and_json() {
    let mut p = chain_program(2);
    let report = place(&mut p, Target::Tofino1).expect("fits");
    let text = report.to_string();
    assert!(
        text.contains("pipeline `pipe`, ingress: stages used: 2 of 12"),
        "{text}"
    );
    assert!(text.contains("t0") && text.contains("t1"));
    let v: serde_json::Value = serde_json::from_str(&report.to_json()).expect("valid json");
    assert_eq!(v["target"], "tofino1");
    assert_eq!(v["pipelines"][0]["gresses"][0]["stages_used"], 2);
    assert_eq!(
        v["pipelines"][0]["gresses"][0]["stages"][1]["tables"][0],
        "t1"
    );
    assert_eq!(v["capacity"]["sram_blocks"], 80);
}

#[test]
fn malformed_ids_are_reported_not_panics() {
    let mut p = B::new().program(vec![
        apply(TableId(42)),
        Stmt::CallAction {
            action: ActionId(99),
            args: Vec::new(),
        },
    ]);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::MalformedIr);
    assert!(issues.iter().any(|i| i.message.contains("table id 42")));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// With at most 16 tables (no stage can fill up), every table lands exactly in the
        /// earliest stage its dependencies allow: one after a table whose write it matches
        /// on or rewrites, not before a table whose key it overwrites.
        #[test]
        fn tables_land_in_the_earliest_legal_stage(
            shape in proptest::collection::vec((0u32..12, 0u32..12), 1..16)
        ) {
            let mut b = B::new();
            let mut body = Vec::new();
            for (i, (key, write)) in shape.iter().enumerate() {
                let t = b.table(&format!("t{i}"), *key, vec![set(*write, c(1))]);
                body.push(apply(t));
            }
            let mut p = b.program(body);
            let report = place(&mut p, Target::Tofino2).expect("16 tables always fit");
            let st: Vec<u32> = (0..shape.len()).map(|i| u32::from(stage(&p, &format!("t{i}")))).collect();
            for j in 0..shape.len() {
                let mut earliest = 0;
                for i in 0..j {
                    let gap = if shape[j].0 == shape[i].1 || shape[j].1 == shape[i].1 {
                        Some(1)
                    } else if shape[j].1 == shape[i].0 {
                        Some(0)
                    } else {
                        None
                    };
                    if let Some(g) = gap {
                        earliest = earliest.max(st[i] + g);
                    }
                }
                prop_assert_eq!(st[j], earliest, "table t{} in {:?}", j, shape);
            }
            let used = st.iter().max().map_or(0, |m| m + 1);
            prop_assert_eq!(report.gress(0, "ingress").map(|g| g.stages_used), Some(used));
        }

        /// Whatever the shape, no stage holds more than the profile allows and a register's
        /// users all sit in the register's stage.
        #[test]
        fn capacity_and_register_stages_hold(
            shape in proptest::collection::vec((0u32..20, 0u32..20, proptest::option::of(0u32..6)), 1..60)
        ) {
            let mut b = B::new();
            let regs: Vec<_> = (0..6).map(|r| b.register(&format!("r{r}"), 32)).collect();
            let mut body = Vec::new();
            let mut users: Vec<(String, usize)> = Vec::new();
            let mut seen_reg = std::collections::BTreeSet::new();
            for (i, (key, write, reg)) in shape.iter().enumerate() {
                let mut act = vec![set(*write, c(1))];
                // One access per register per path: only the first table may use a register.
                if let Some(r) = reg {
                    if seen_reg.insert(*r) {
                        let ra = b.register_action(&format!("ra{i}"), regs[*r as usize], vec![reg_set(bin(BinOp::Add, value(), c(1)))], 0);
                        act.push(set(40, execute(ra, 32)));
                        users.push((format!("t{i}"), *r as usize));
                    }
                }
                let t = b.table(&format!("t{i}"), *key, act);
                body.push(apply(t));
            }
            let mut p = b.program(body);
            match place(&mut p, Target::Tofino1) {
                Ok(report) => {
                    for s in &report.gress(0, "ingress").expect("ingress").stages {
                        prop_assert!(s.logical_tables <= 16);
                        prop_assert!(s.stateful_alus <= 4);
                        prop_assert!(s.sram_blocks <= 80);
                    }
                    for (t, r) in &users {
                        prop_assert_eq!(stage(&p, t), p.pipelines[0].registers[*r].stage);
                    }
                }
                Err(issues) => {
                    // Only a dependency chain that is too long (or a stage conflict through
                    // writes of f40 by register users) may reject it.
                    for i in errors(&issues) {
                        prop_assert!(
                            matches!(i.kind, IssueKind::TooManyStages | IssueKind::RegisterStageConflict),
                            "{}", i
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_table_applied_in_two_branches_is_one_table_in_one_stage() {
    // `if (c && t0.apply().hit) {..} else { t2.apply(); }` lowers to two applies of t2: one in
    // the gateway's else (stage 0 possible), one on t0's miss, matching on what t0 writes
    // (stage 1 at the earliest).
    let mut b = B::new();
    let t0 = b.table("t0", 0, vec![set(5, c(1))]);
    let t2 = b.table("t2", 5, vec![set(6, c(1))]);
    let body = vec![if_(
        bin(BinOp::Eq, f(9), c(1)),
        vec![Stmt::ApplyTable {
            table: t0,
            branches: TableBranches::HitMiss {
                hit: vec![],
                miss: vec![apply(t2)],
            },
        }],
        vec![apply(t2)],
    )];
    let mut p = b.program(body);
    let report = place(&mut p, Target::Tofino1).expect("fits");
    assert_eq!(stage(&p, "t2"), 1);
    let g = report.gress(0, "ingress").expect("ingress");
    assert_eq!(g.stages[1].tables, vec!["t2".to_string()]);
    assert_eq!(g.stages[1].logical_tables, 1, "counted once");
    assert!(g.stages[0].tables.iter().all(|t| t != "t2"));
}

#[test]
fn register_accesses_that_depend_on_each_other_cannot_share_a_stage() {
    let mut b = B::new();
    let r = b.register("r", 32);
    let ra1 = b.register_action("first", r, vec![rv(value())], 32);
    let ra2 = b.register_action("second", r, vec![reg_set(c(0))], 0);
    let t0 = b.table("t0", 0, vec![set(1, execute(ra1, 32))]);
    let t1 = b.table("t1", 1, vec![set(2, execute(ra2, 32))]);
    let mut p = b.program(vec![apply(t0), apply(t1)]);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::RegisterStageConflict);
    let e = issues
        .iter()
        .find(|i| i.kind == IssueKind::RegisterStageConflict)
        .expect("conflict");
    assert_eq!(e.object, ObjectRef::Register(0, r));
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("matches on `meta.f1`, written by `t0`")),
        "{e}"
    );
}

#[test]
fn registers_larger_than_a_stage() {
    let mut b = B::new();
    let r = b.register("huge", 32);
    b.pipe.registers[r.index()].size = 1 << 20; // 32 Mb = 256 blocks of 128 Kb
    let ra = b.register_action("ra", r, vec![rv(value())], 32);
    let mut p = b.program(vec![set(1, execute(ra, 32))]);
    let issues = expect_error(&mut p, Target::Tofino1, IssueKind::TableTooLarge);
    let e = errors(&issues)[0];
    assert_eq!(e.object, ObjectRef::Register(0, r));
    assert!(
        e.message
            .contains("needs 256 SRAM blocks; a tofino1 stage has 80"),
        "{}",
        e.message
    );
}

#[test]
fn control_statements_get_the_same_action_warnings() {
    let mut p = B::new().program(vec![set(1, bin(BinOp::Div, f(2), f(3)))]);
    let (_, warnings) = place_with_warnings(&mut p, Target::Tofino1).expect("warnings only");
    assert!(
        warnings.iter().any(|w| w.object == ObjectRef::Pipeline(0)
            && w.message.contains("in control `Ingress`")
            && w.message.contains("cannot divide")),
        "{warnings:#?}"
    );
    // Division by a power of two is a shift: no warning.
    let mut p = B::new().program(vec![set(1, bin(BinOp::Div, f(2), c(8)))]);
    let (_, warnings) = place_with_warnings(&mut p, Target::Tofino1).expect("fits");
    assert!(warnings.is_empty(), "{warnings:#?}");
}

#[test]
fn a_one_bit_register_may_return_its_bit_complemented_but_not_add() {
    let not_value = Expr::Unary {
        op: UnOp::Not,
        arg: Box::new(value()),
        width: 1,
    };
    let one_bit_warnings = |body: Vec<Stmt>| {
        let mut b = B::new();
        let r = b.register("bit", 1);
        let ra = b.register_action("ra", r, body, 1);
        let t = b.table("t", 0, vec![set(4, execute(ra, 1))]);
        let mut p = b.program(vec![apply(t)]);
        let (_, warnings) = place_with_warnings(&mut p, Target::Tofino1).expect("warnings only");
        warnings
            .into_iter()
            .filter(|w| w.message.contains("1-bit words"))
            .count()
    };
    // bf-p4c's read_bitc / set_bitc: the bit complemented out, set in memory.
    assert_eq!(one_bit_warnings(vec![rv(not_value), reg_set(c(1))]), 0);
    assert_eq!(
        one_bit_warnings(vec![reg_set(bin(BinOp::Add, value(), c(1)))]),
        1
    );
}

/// Fields narrower than a byte take crossbar bits, not a byte each: bf-p4c packs small
/// metadata fields into shared container bytes. 64 bytes of wide keys plus sixteen 1-bit
/// flags (each alone in its byte of this layout) need 66 ternary crossbar bytes, which fit.
#[test]
fn one_bit_keys_pack_on_the_crossbar() {
    let mut b = B::new();
    let a = b.action("a", vec![]);
    let mut keys: Vec<_> = (0..4)
        .map(|i| (Expr::Field(wide(i)), MatchKind::Ternary))
        .collect();
    keys.extend((0..16).map(|i| {
        let bit = FieldRef {
            offset: i * 32,
            width: 1,
        };
        (Expr::Field(bit), MatchKind::Ternary)
    }));
    let t = b.table_kind("flags", keys, vec![a], 16);
    let mut p = b.program(vec![apply(t)]);
    place(&mut p, Target::Tofino1).expect("16 one-bit keys take 2 crossbar bytes");
}
