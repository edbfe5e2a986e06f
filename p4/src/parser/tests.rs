//! Unit tests of the parser on small inputs.

use crate::ast::*;
use crate::{parse_str, LoadOptions};

fn parse_ok(text: &str) -> Program {
    let (sm, r) = parse_str("t.p4", text, &LoadOptions::default());
    match r {
        Ok(p) => p,
        Err(d) => panic!("{}", d.render(&sm)),
    }
}

fn parse_err(text: &str) -> String {
    let (sm, r) = parse_str("t.p4", text, &LoadOptions::default());
    match r {
        Ok(_) => panic!("expected errors"),
        Err(d) => d.render(&sm),
    }
}

#[test]
fn header_and_struct() {
    let p = parse_ok("header h_t { bit<8> a; bit<16> b; }\nstruct s_t { h_t h; h_t[4] stack; }");
    assert_eq!(p.decls.len(), 2);
    let DeclKind::Struct(s) = &p.decls[1].kind else {
        panic!()
    };
    assert!(matches!(s.fields[1].ty.kind, TypeKind::Stack { .. }));
}

#[test]
fn realistic_tna_program_parses() {
    let text = include_str!("../../tests/syntax/ok/forward_tna.p4");
    let p = parse_ok(text);
    let names: Vec<&str> = p
        .decls
        .iter()
        .filter_map(|d| d.name().map(|n| n.name.as_str()))
        .collect();
    assert!(names.contains(&"SwitchIngress"));
    assert!(names.contains(&"main"));
    assert!(names.contains(&"RegisterAction"));
}

#[test]
fn builtin_headers_parse_for_both_targets() {
    for (header, gen) in [("tna.p4", "1"), ("t2na.p4", "2")] {
        let opts = LoadOptions {
            include_dirs: vec![],
            defines: vec![("__TARGET_TOFINO__".into(), gen.into())],
            ..Default::default()
        };
        let (sm, r) = parse_str("t.p4", &format!("#include <{header}>\n"), &opts);
        if let Err(d) = r {
            panic!("{header}: {}", d.render(&sm));
        }
    }
}

#[test]
fn missing_semicolon_points_at_end_of_previous_line() {
    let r = parse_err("header h_t {\n    bit<8> a\n    bit<8> b;\n}\n");
    assert!(
        r.starts_with("error: expected `;`, found keyword `bit`\n --> t.p4:2:13\n"),
        "{r}"
    );
    assert!(
        r.contains("2 |     bit<8> a\n  |             ^ expected `;`\n"),
        "{r}"
    );
}

#[test]
fn several_bad_declarations_are_all_reported() {
    let r = parse_err(
        "const bit<8> A = ;\nheader h { bit<8> x; }\nstruct s { h h1 }\ncontrol c() { apply { x = ; } }\n",
    );
    assert_eq!(r.matches("error:").count(), 3, "{r}");
    assert!(r.contains("expected an expression, found `;`"), "{r}");
    assert!(r.contains("expected `;`, found `}`"), "{r}");
}

#[test]
fn precedence_follows_p4() {
    let p = parse_ok("const bool X = 1 & 2 == 2;\nconst bit<8> Y = 8w1 + 8w2 * 8w3;");
    let DeclKind::Const(c) = &p.decls[0].kind else {
        panic!()
    };
    // `==` binds looser than `&` in P4.
    let ExprKind::Binary { op, lhs, .. } = &c.value.kind else {
        panic!()
    };
    assert_eq!(*op, BinOp::Eq);
    assert!(matches!(
        lhs.kind,
        ExprKind::Binary {
            op: BinOp::BitAnd,
            ..
        }
    ));
    let DeclKind::Const(c) = &p.decls[1].kind else {
        panic!()
    };
    let ExprKind::Binary { op, rhs, .. } = &c.value.kind else {
        panic!()
    };
    assert_eq!(*op, BinOp::Add);
    assert!(matches!(rhs.kind, ExprKind::Binary { op: BinOp::Mul, .. }));
}

#[test]
fn shift_versus_nested_generic_close() {
    let p = parse_ok(
        "extern E<T> { E(); }\ncontrol c() { E<bit<8>>() e; bit<8> x = 8w4 >> 1; apply { x = x >> 2; x >>= 1; } }",
    );
    let DeclKind::Control(c) = &p.decls[1].kind else {
        panic!()
    };
    let DeclKind::Instantiation(i) = &c.locals[0].kind else {
        panic!()
    };
    assert!(matches!(i.ty.kind, TypeKind::Specialized { .. }));
    let DeclKind::Variable(v) = &c.locals[1].kind else {
        panic!()
    };
    assert!(matches!(
        v.init.as_ref().map(|e| &e.kind),
        Some(ExprKind::Binary { op: BinOp::Shr, .. })
    ));
    assert!(matches!(
        c.apply.stmts[1].kind,
        StmtKind::Assign {
            op: Some(BinOp::Shr),
            ..
        }
    ));
}

#[test]
fn casts_use_type_names() {
    let p = parse_ok("typedef bit<8> T;\nconst T A = (T) 1;\nconst bit<8> B = (A) + 1;");
    let DeclKind::Const(a) = &p.decls[1].kind else {
        panic!()
    };
    assert!(matches!(a.value.kind, ExprKind::Cast { .. }));
    let DeclKind::Const(b) = &p.decls[2].kind else {
        panic!()
    };
    assert!(matches!(
        b.value.kind,
        ExprKind::Binary { op: BinOp::Add, .. }
    ));
}

#[test]
fn error_flood_stops_with_a_note() {
    let text = "const bit<8> A = ;\n".repeat(300);
    let (_sm, r) = parse_str("t.p4", &text, &LoadOptions::default());
    let d = r.expect_err("errors");
    assert_eq!(d.error_count(), 100);
    let last = d.iter().last().expect("note");
    assert_eq!(last.severity, crate::diag::Severity::Note);
    assert!(last.message.contains("stopped after 100 errors"));
}

#[test]
fn builtin_declarations_are_marked() {
    let (sm, r) = parse_str(
        "t.p4",
        "#include <core.p4>\nconst bit<8> A = 1;",
        &LoadOptions::default(),
    );
    let p = r.expect("parses");
    let user: Vec<&Decl> = p
        .decls
        .iter()
        .filter(|d| !sm.is_builtin(d.span.file))
        .collect();
    assert_eq!(user.len(), 1);
    assert!(p.decls.len() > 5);
}
