//! `@pa_alias(gress, a, b)`: bf-p4c puts the two scalar fields in one PHV container, so they
//! are one field: a write of either is seen through both names, and a copy from one to the
//! other is a no-op (bf-p4c removes it, which can save a stage). pisa gives both names the
//! same storage when the gress's storage is allocated. A field bound to intrinsic metadata or
//! inside a header keeps its own storage (the other name moves onto it); otherwise `b` moves
//! onto `a`. Of two fields of different widths the narrower becomes the wider's low bits, as
//! bf-p4c's alias pass makes it (a narrower intrinsic is bound there). Names that do not
//! resolve, and two fields neither of which can move, are warned about and left apart.

use std::rc::Rc;

use pipeline::ir::{FieldRef, Gress, Intrinsic};

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

/// A field an alias names: its storage and width.
type Found = (FieldRef, u16);

/// The scalar field `path` names among `roots`. `None` when a name does not resolve or the
/// path is not a scalar.
fn find(roots: &[(String, Rc<Loc>)], path: &str) -> Option<Found> {
    let mut parts = path.split('.');
    let root = parts.next()?;
    let mut loc = roots.iter().find(|(n, _)| n == root)?.1.clone();
    for m in parts {
        loc = loc.field(m)?;
    }
    match &*loc {
        Loc::Field { f, ty } => Some((*f, ty.scalar_width()?)),
        _ => None,
    }
}

/// Applies the program's `@pa_alias` annotations for `gress` to `roots` (the gress's storage,
/// each named by the control parameter that binds it). `bindings` are the fields bound to
/// intrinsic metadata (a narrower intrinsic aliased onto a wider field is rebound there).
pub(super) fn apply(
    l: &mut Lowerer<'_>,
    gress: Gress,
    roots: &mut [(String, Rc<Loc>)],
    bindings: &mut [(Intrinsic, FieldRef)],
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
        if x.0 == y.0 {
            continue;
        }
        let done = if x.1 == y.1 {
            same_width(roots, bindings, &x, &y)
        } else {
            let (narrow, wide) = if x.1 < y.1 { (&x, &y) } else { (&y, &x) };
            onto_low_bits(roots, bindings, narrow, wide)
        };
        if !done {
            let why = if x.1 == y.1 {
                "both are header or intrinsic fields; pisa moves a metadata field onto the other (a header's fields are laid out in its packet bytes, which pisa keeps apart)"
            } else {
                "the narrower one's storage is a header field (a header's fields are laid out in its packet bytes, which pisa keeps apart)"
            };
            warn_apart(l, &al, why);
        }
    }
}

/// Fields of one width: the intrinsic one keeps its storage, and so does a header field (its
/// storage is its packet bytes); else `b` moves onto `a` (under every name that shares it).
fn same_width(
    roots: &mut [(String, Rc<Loc>)],
    bindings: &[(Intrinsic, FieldRef)],
    x: &Found,
    y: &Found,
) -> bool {
    for (keep, moved) in [(x, y), (y, x)] {
        let bound = bindings.iter().any(|b| b.1 == moved.0);
        if bound || roots.iter().any(|(_, loc)| in_header(loc, moved.0, false)) {
            continue;
        }
        for (_, loc) in roots.iter_mut() {
            *loc = remap(loc, moved.0, keep.0);
        }
        return true;
    }
    false
}

/// Fields of different widths, as bf-p4c aliases them (its `PragmaAlias` takes the narrower
/// as the alias of the wider's low bits, `wide[n-1:0]`): the narrower's storage moves onto
/// those bits, under every name that shares it (earlier aliases), and a narrower intrinsic is
/// bound there, so a write of the wide field is what the deparser or traffic manager reads
/// through the narrow one. Not when the narrower's storage is a header's packet bytes.
fn onto_low_bits(
    roots: &mut [(String, Rc<Loc>)],
    bindings: &mut [(Intrinsic, FieldRef)],
    narrow: &Found,
    wide: &Found,
) -> bool {
    let from = narrow.0;
    let to = FieldRef {
        offset: wide.0.offset + u32::from(wide.1 - narrow.1),
        width: narrow.1,
    };
    if roots.iter().any(|(_, loc)| in_header(loc, from, false)) {
        return false;
    }
    for (_, loc) in roots.iter_mut() {
        *loc = remap(loc, from, to);
    }
    for b in bindings.iter_mut().filter(|b| within(b.1, from)) {
        b.1 = moved(b.1, from, to);
    }
    true
}

/// Whether `f` lies inside `range`.
fn within(f: FieldRef, range: FieldRef) -> bool {
    f.offset >= range.offset
        && f.offset + u32::from(f.width) <= range.offset + u32::from(range.width)
}

/// `f` (inside `from`) at the same place inside `to`.
fn moved(f: FieldRef, from: FieldRef, to: FieldRef) -> FieldRef {
    FieldRef {
        offset: to.offset + (f.offset - from.offset),
        width: f.width,
    }
}

/// Whether a field of a header (or header stack) in `loc` overlaps `range`.
fn in_header(loc: &Loc, range: FieldRef, header: bool) -> bool {
    match loc {
        Loc::Field { f, .. } | Loc::Varbit { f, .. } => {
            header
                && f.offset < range.offset + u32::from(range.width)
                && range.offset < f.offset + u32::from(f.width)
        }
        Loc::Header { fields, .. } => fields.iter().any(|x| in_header(x, range, true)),
        Loc::Stack { elems, .. } => elems.iter().any(|x| in_header(x, range, true)),
        Loc::Struct { fields, .. } => fields.iter().any(|x| in_header(x, range, header)),
        Loc::RegWord(..) | Loc::RegOut(..) => false,
    }
}

/// `loc` with every struct member field inside `from` moved to the same place inside `to`.
fn remap(loc: &Rc<Loc>, from: FieldRef, to: FieldRef) -> Rc<Loc> {
    match &**loc {
        Loc::Field { f, ty } if within(*f, from) => Rc::new(Loc::Field {
            f: moved(*f, from, to),
            ty: ty.clone(),
        }),
        Loc::Struct { ty, fields } => Rc::new(Loc::Struct {
            ty: ty.clone(),
            fields: fields.iter().map(|x| remap(x, from, to)).collect(),
        }),
        _ => loc.clone(),
    }
}

fn warn_apart(l: &mut Lowerer<'_>, al: &Alias, why: &str) {
    l.warn(
        Diagnostic::warning(format!("`@pa_alias`: `{}` and `{}`: {why}", al.a, al.b))
            .with_primary(al.span, "not applied"),
    );
}
