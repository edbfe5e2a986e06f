//! `@pa_alias(gress, a, b)`: bf-p4c puts the two scalar fields in one PHV container, so they
//! are one field: a write of either is seen through both names, and a copy from one to the
//! other is a no-op (bf-p4c removes it, which can save a stage). pisa gives both names the
//! same storage when the gress's storage is allocated. A field bound to intrinsic metadata or
//! inside a header keeps its own storage (the other name moves onto it); otherwise `b` moves
//! onto `a`. Fields of different widths, names that do not resolve, and two fields neither of
//! which can move are warned about and left apart.

use std::rc::Rc;

use pipeline::ir::{FieldRef, Gress};

use super::phv::Loc;
use super::Lowerer;
use crate::ast::{AnnotationBody, ExprKind};
use crate::diag::Diagnostic;
use crate::source::Span;

/// One `@pa_alias` that names this gress.
struct Alias {
    a: String,
    b: String,
    span: Span,
}

/// The program's `@pa_alias` annotations for `gress` (the three-argument form; the folded
/// pipeline's four-argument form names a pipe and is not read).
fn aliases(l: &Lowerer<'_>, gress: Gress) -> Vec<Alias> {
    let want = match gress {
        Gress::Ingress => "ingress",
        Gress::Egress => "egress",
    };
    let mut out = Vec::new();
    for d in &l.env.program.decls {
        for a in d.annotations.iter().filter(|a| a.name.name == "pa_alias") {
            if l.env.is_arch(a.span) {
                continue;
            }
            let AnnotationBody::Exprs(es) = &a.body else {
                continue;
            };
            let strs: Vec<&str> = es
                .iter()
                .filter_map(|e| match &e.kind {
                    ExprKind::String(s) => Some(s.as_str()),
                    _ => None,
                })
                .collect();
            if let [g, x, y] = strs[..] {
                if g == want {
                    out.push(Alias {
                        a: x.to_string(),
                        b: y.to_string(),
                        span: a.span,
                    });
                }
            }
        }
    }
    out
}

/// The scalar field `path` names among `roots`: its root's index, the member names below the
/// root, and the field. `None` when a name does not resolve or the path is not a scalar.
fn find(roots: &[(String, Rc<Loc>)], path: &str) -> Option<(usize, Vec<String>, FieldRef, u16)> {
    let mut parts = path.split('.');
    let root = parts.next()?;
    let i = roots.iter().position(|(n, _)| n == root)?;
    let rest: Vec<String> = parts.map(str::to_string).collect();
    let mut loc = roots[i].1.clone();
    for m in &rest {
        loc = loc.field(m)?;
    }
    match &*loc {
        Loc::Field { f, ty } => Some((i, rest, *f, ty.scalar_width()?)),
        _ => None,
    }
}

/// `loc` with the field at `path` replaced by `with`; `None` when the path crosses anything
/// but structs (a header's fields are laid out in its packet bytes).
fn with_field(loc: &Rc<Loc>, path: &[String], with: &Rc<Loc>) -> Option<Rc<Loc>> {
    let (first, rest) = path.split_first()?;
    let Loc::Struct { ty, fields } = &**loc else {
        return None;
    };
    let (i, _) = ty.field(first)?;
    let mut fields = fields.clone();
    fields[i] = if rest.is_empty() {
        with.clone()
    } else {
        with_field(&fields[i], rest, with)?
    };
    Some(Rc::new(Loc::Struct {
        ty: ty.clone(),
        fields,
    }))
}

/// Applies the program's `@pa_alias` annotations for `gress` to `roots` (the gress's storage,
/// each named by the control parameter that binds it). `bound` are the fields bound to
/// intrinsic metadata.
pub(super) fn apply(
    l: &mut Lowerer<'_>,
    gress: Gress,
    roots: &mut [(String, Rc<Loc>)],
    bound: &[FieldRef],
) {
    for al in aliases(l, gress) {
        let (Some(x), Some(y)) = (find(roots, &al.a), find(roots, &al.b)) else {
            l.warn(
                Diagnostic::warning(format!(
                    "`@pa_alias(\"{gress}\", \"{}\", \"{}\")`: a name is not a scalar field of the {gress} storage; ignored",
                    al.a, al.b
                ))
                .with_primary(al.span, "not applied"),
            );
            continue;
        };
        if x.3 != y.3 {
            l.warn(
                Diagnostic::warning(format!(
                    "`@pa_alias`: `{}` is {} bits, `{}` {}; fields of different widths are left apart",
                    al.a, x.3, al.b, y.3
                ))
                .with_primary(al.span, "not applied"),
            );
            continue;
        }
        if x.2 == y.2 {
            continue;
        }
        // The intrinsic one keeps its storage, and so does a header field (its storage is
        // its packet bytes); else `b` moves onto `a`.
        let tries = [(&x, &y), (&y, &x)];
        let mut done = false;
        for (keep, moved) in tries {
            if bound.contains(&moved.2) {
                continue;
            }
            let Loc::Field { ty, .. } = &*field_loc(roots, keep) else {
                continue;
            };
            let with = Rc::new(Loc::Field {
                f: keep.2,
                ty: ty.clone(),
            });
            if let Some(r) = with_field(&roots[moved.0].1, &moved.1, &with) {
                roots[moved.0].1 = r;
                done = true;
                break;
            }
        }
        if !done {
            l.warn(
                Diagnostic::warning(format!(
                    "`@pa_alias`: `{}` and `{}` are both header or intrinsic fields; pisa moves a metadata field onto the other (a header's fields are laid out in its packet bytes, which pisa keeps apart)",
                    al.a, al.b
                ))
                .with_primary(al.span, "not applied"),
            );
        }
    }
}

fn field_loc(roots: &[(String, Rc<Loc>)], at: &(usize, Vec<String>, FieldRef, u16)) -> Rc<Loc> {
    let mut loc = roots[at.0].1.clone();
    for m in &at.1 {
        match loc.field(m) {
            Some(x) => loc = x,
            None => break,
        }
    }
    loc
}
