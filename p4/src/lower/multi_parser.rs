//! `MultiParserPipeline`: several parsers per gress (`IngressParsers(...)` /
//! `EgressParsers(...)`), each run on the ports of the hardware parser units it is bound to.
//!
//! How Tofino binds them (from bf-p4c and the driver, not from a spec): a pipe has
//! [`parser_units`] parser units per gress, each serving the consecutive ports of one channel
//! group ([`ports_per_unit`]: 4 on Tofino 1, 2 on Tofino 2). bf-p4c reads
//! `@default_portmap(a0, a1, ...)` on the `IngressParsers` instance, one argument per parser (a
//! unit number or a `{list}` of them), and writes each parser's units as its
//! `default_parser_id` in context.json; a parser without an argument claims every unit. The
//! driver loads a unit with the first parser whose map holds it. pisa lowers the set into one
//! parse graph whose first state selects on the port the packet came in on (ingress) or leaves
//! by (egress), read from the intrinsic metadata at the head of the packet, and goes to the
//! `start` of that port's parser. The driver can rebind units at run time (pipe_mgr's parser
//! instance profiles); no runtime API exposes that, so pisa keeps the compiled default binding.

use std::rc::Rc;

use pipeline::ir::{self, FieldRef, Gress, KeysetElem, NextState, StateId, Target};

use super::{BlockInst, Lowerer, Res};
use crate::ast::{self, AnnotationBody, DeclKind, ExprKind};
use crate::diag::Diagnostic;
use crate::source::Span;

/// The parsers of one `IngressParsers` / `EgressParsers` instance, in argument order.
pub(super) struct ParserSet<'a> {
    /// The package instance's name (`ig_pipe0`), or the package's for an inline one.
    pub name: String,
    pub parsers: Vec<Rc<BlockInst<'a>>>,
    /// The `@default_portmap` units of each parser (`None`: every unit).
    pub portmap: Vec<Option<Vec<u32>>>,
    pub span: Span,
}

/// Parser units per pipe and gress (bf-asm's `NUM_PARSERS`).
pub(super) fn parser_units(target: Target) -> u32 {
    match target {
        Target::Tofino1 => 18,
        Target::Tofino2 => 36,
    }
}

/// Consecutive ports of a pipe one parser unit serves (72 ports per pipe over the units).
pub(super) fn ports_per_unit(target: Target) -> u32 {
    72 / parser_units(target)
}

fn package_name(gress: Gress) -> &'static str {
    match gress {
        Gress::Ingress => "IngressParsers",
        Gress::Egress => "EgressParsers",
    }
}

/// Resolves a `MultiParserPipeline` parser argument to its parsers and their port map.
pub(super) fn parser_set<'a>(
    l: &mut Lowerer<'a>,
    e: &'a ast::Expr,
    gress: Gress,
) -> Res<ParserSet<'a>> {
    let want = package_name(gress);
    let (name, args, annotations): (String, &'a [ast::Argument], &'a [ast::Annotation]) = match &e
        .kind
    {
        ExprKind::Name(id) => match l.env.lookup(&id.name) {
            Some(d) => match &d.kind {
                DeclKind::Instantiation(i)
                    if super::block::type_name(&i.ty).is_some_and(|t| t.name == want) =>
                {
                    (id.name.clone(), &i.args, &d.annotations)
                }
                _ => return Err(not_a_set(l, e.span, want)),
            },
            None => return Err(l.unknown_name(id, want)),
        },
        ExprKind::Call { callee, args, .. } if matches!(&callee.kind, ExprKind::Name(n) if n.name == want) => {
            (want.to_string(), args, &[])
        }
        _ => return Err(not_a_set(l, e.span, want)),
    };
    let mut parsers = Vec::new();
    let mut bad = false;
    for a in args {
        match super::block::block_instance(l, &a.value, true) {
            Ok(b) => parsers.push(Rc::new(b)),
            Err(_) => bad = true,
        }
    }
    if bad || parsers.is_empty() {
        return Err(super::Reported);
    }
    let portmap = default_portmap(l, annotations, parsers.len())?;
    Ok(ParserSet {
        name,
        parsers,
        portmap,
        span: e.span,
    })
}

fn not_a_set(l: &mut Lowerer<'_>, span: Span, want: &str) -> super::Reported {
    l.err(
        Diagnostic::error(format!("expected an `{want}` instance"))
            .with_primary(
                span,
                "a `MultiParserPipeline` takes its parsers as a package",
            )
            .with_help(format!(
                "declare `{want}(MyParser()) prsrs;` and pass `prsrs`"
            )),
    )
}

/// `@default_portmap(...)`: one argument per parser, a unit number or a list of them.
fn default_portmap<'a>(
    l: &mut Lowerer<'a>,
    annotations: &'a [ast::Annotation],
    n: usize,
) -> Res<Vec<Option<Vec<u32>>>> {
    let mut map = vec![None; n];
    let Some(a) = annotations
        .iter()
        .find(|a| a.name.name == "default_portmap")
    else {
        return Ok(map);
    };
    let AnnotationBody::Exprs(exprs) = &a.body else {
        return Err(l.err(
            Diagnostic::error("`@default_portmap` takes unit numbers or `{lists}` of them")
                .with_primary(a.span, "here"),
        ));
    };
    let units = parser_units(l.target);
    for (k, e) in exprs.iter().enumerate().take(n) {
        let items: Vec<&'a ast::Expr> = match &e.kind {
            ExprKind::List(xs) => xs.iter().collect(),
            _ => vec![e],
        };
        let mut v = Vec::new();
        for x in items {
            if matches!(x.kind, ExprKind::Bool(_)) {
                return Err(l.err(
                    Diagnostic::error("`@default_portmap` takes unit numbers, not booleans")
                        .with_primary(x.span, "not a parser unit"),
                ));
            }
            let u = l.const_int(x)?;
            if !(0..i128::from(units)).contains(&u) {
                return Err(l.err(
                    Diagnostic::error(format!(
                        "parser unit {u} does not exist: a {} pipe has units 0 to {}",
                        match l.target {
                            Target::Tofino1 => "Tofino 1",
                            Target::Tofino2 => "Tofino 2",
                        },
                        units - 1
                    ))
                    .with_primary(x.span, "in `@default_portmap`"),
                ));
            }
            if v.contains(&(u as u32)) {
                l.warn(
                    Diagnostic::warning(format!("parser unit {u} is listed twice"))
                        .with_primary(x.span, "already in this parser's units"),
                );
            }
            v.push(u as u32);
        }
        map[k] = Some(v);
    }
    Ok(map)
}

/// The parser each unit runs: the first whose map holds it (`None`: no parser claims it).
pub(super) fn binding(portmap: &[Option<Vec<u32>>], target: Target) -> Vec<Option<usize>> {
    (0..parser_units(target))
        .map(|u| {
            portmap
                .iter()
                .position(|m| m.as_ref().is_none_or(|v| v.contains(&u)))
        })
        .collect()
}

/// The first state's transition: select on the port's unit bits, to each unit's parser.
/// `port` is where the port number lies in the intrinsic metadata at the head of the packet.
pub(super) fn dispatch(
    bound: &[Option<usize>],
    starts: &[StateId],
    port: FieldRef,
    target: Target,
) -> ir::Transition {
    let mut count = vec![0usize; starts.len()];
    for i in bound.iter().flatten() {
        count[*i] += 1;
    }
    let default = (0..starts.len())
        .max_by_key(|i| (count[*i], usize::MAX - i))
        .unwrap_or(0);
    let per = ports_per_unit(target);
    let mask = 0x7f & !(u128::from(per) - 1);
    let cases = bound
        .iter()
        .enumerate()
        .filter_map(|(u, b)| {
            let i = (*b)?;
            (i != default).then(|| ir::SelectCase {
                keyset: vec![KeysetElem::Mask {
                    value: u128::from(u as u32 * per),
                    mask,
                }],
                next: NextState::State(starts[i]),
            })
        })
        .collect();
    ir::Transition::Select {
        keys: vec![ir::Expr::Lookahead {
            offset_bits: port.offset,
            width: port.width,
        }],
        cases,
        default: NextState::State(starts[default]),
    }
}

/// Warns when some units have no parser (their ports go to the parser of most units).
pub(super) fn warn_unbound(l: &mut Lowerer<'_>, set: &ParserSet<'_>, bound: &[Option<usize>]) {
    let free: Vec<String> = (0..bound.len())
        .filter(|u| bound[*u].is_none())
        .map(|u| u.to_string())
        .collect();
    if free.is_empty() {
        return;
    }
    l.warn(
        Diagnostic::warning(format!(
            "`@default_portmap` of `{}` binds no parser to units {}: the driver leaves them \
             unprogrammed; pisa parses their ports with the parser of most units",
            set.name,
            free.join(", ")
        ))
        .with_primary(set.span, "these parsers")
        .with_help("list every unit of the pipe in one of the parsers' arguments"),
    );
}

/// Warns about each parser of the set that no unit runs (its map empty, or every unit of it
/// claimed by an earlier parser): it never parses a packet.
pub(super) fn warn_unused(l: &mut Lowerer<'_>, set: &ParserSet<'_>, bound: &[Option<usize>]) {
    for (i, p) in set.parsers.iter().enumerate() {
        if bound.contains(&Some(i)) {
            continue;
        }
        l.warn(
            Diagnostic::warning(format!(
                "parser `{}` (argument {i} of `{}`) runs on no parser unit: its \
                 `@default_portmap` units are none, or all taken by earlier parsers, so it \
                 never parses a packet",
                p.name, set.name
            ))
            .with_primary(set.span, "these parsers")
            .with_help("give it units of its own in `@default_portmap`"),
        );
    }
}

/// The intrinsic-metadata field that holds the port a gress's parser units are chosen by.
pub(super) fn port_field(prefix: &ir::PrefixLayout, gress: Gress) -> Option<FieldRef> {
    let want = match gress {
        Gress::Ingress => ir::Intrinsic::IgIngressPort,
        Gress::Egress => ir::Intrinsic::EgEgressPort,
    };
    prefix
        .fields
        .iter()
        .find(|(i, _)| *i == want)
        .map(|(_, f)| *f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parser_without_a_map_claims_every_unit_left() {
        let map = vec![Some(vec![17]), None];
        let b = binding(&map, Target::Tofino1);
        assert_eq!(b[17], Some(0));
        assert_eq!(b[0], Some(1));
        assert_eq!(b.len(), 18);
        let only = vec![Some(vec![0, 1])];
        assert_eq!(binding(&only, Target::Tofino2)[2], None);
    }

    #[test]
    fn dispatch_selects_the_units_of_the_minority_parser() {
        let map = vec![Some(vec![1]), None];
        let b = binding(&map, Target::Tofino1);
        let port = FieldRef {
            offset: 7,
            width: 9,
        };
        let t = dispatch(&b, &[StateId(0), StateId(5)], port, Target::Tofino1);
        let ir::Transition::Select { cases, default, .. } = t else {
            panic!("not a select");
        };
        assert_eq!(default, NextState::State(StateId(5)));
        assert_eq!(cases.len(), 1);
        assert_eq!(
            cases[0].keyset,
            vec![KeysetElem::Mask {
                value: 4,
                mask: 0x7c
            }]
        );
    }
}
