//! `Hash` (with `@symmetric` pairs), `CRCPolynomial` and `Random`.

use pipeline::ir::{self, CrcSpec, HashAlgorithm, HashId};

use super::{enum_member, flat_inputs, Call, Ctor, ExternType, Kind};
use crate::ast::{self};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::{path_of, Resolved};
use crate::lower::{Binding, Lowerer, Res, V};
use crate::source::Span;

/// `Hash`, `CRCPolynomial`, `Random`.
pub(super) struct Hashes;

impl ExternType for Hashes {
    fn names(&self) -> &'static [&'static str] {
        &["Hash", "CRCPolynomial", "Random"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let i = c.inst;
        let name = &c.name;
        let d = c.decl;
        let args = &c.args;
        let span = c.inst.name.span;
        let kind = match tname.as_str() {
            "Hash" => {
                c.arity(l, 1, 2)?;
                let width = match c.targ(0) {
                    Some(Ty::Bit(w)) => w,
                    _ => {
                        return Err(l.err(
                            Diagnostic::error("`Hash` needs its output type")
                                .with_primary(i.ty.span, "write `Hash<bit<16>>(...)`"),
                        ))
                    }
                };
                let algo = enum_member(l, args[0], "HashAlgorithm_t")?;
                let algorithm = match algo.as_str() {
                    "IDENTITY" => HashAlgorithm::Identity,
                    "RANDOM" => HashAlgorithm::Random,
                    "XOR8" => HashAlgorithm::Xor8,
                    "XOR16" => HashAlgorithm::Xor16,
                    "XOR32" => HashAlgorithm::Xor32,
                    "CUSTOM" => {
                        let Some(p) = args.get(1) else {
                            return Err(l.err(
                            Diagnostic::error("`HashAlgorithm_t.CUSTOM` needs a `CRCPolynomial`")
                                .with_primary(args[0].span, "custom hash without a polynomial")
                                .with_help("pass a `CRCPolynomial<...>(...)` instance as the second argument"),
                        ));
                        };
                        match l.resolve(p)? {
                            Resolved::Obj(Binding::Extern(x)) => match &x.kind {
                                Kind::CrcPoly(c) => HashAlgorithm::Crc(*c),
                                _ => {
                                    return Err(l.err(
                                        Diagnostic::error("expected a `CRCPolynomial` instance")
                                            .with_primary(p.span, "not a CRC polynomial"),
                                    ))
                                }
                            },
                            _ => {
                                return Err(l.err(
                                    Diagnostic::error("expected a `CRCPolynomial` instance")
                                        .with_primary(p.span, "not a CRC polynomial"),
                                ))
                            }
                        }
                    }
                    other => match crc_preset(other) {
                        Some(c) => HashAlgorithm::Crc(c),
                        None => {
                            return Err(l.err(crate::check::unsupported(
                                args[0].span,
                                &format!("hash algorithm `{other}`"),
                                &format!("`{other}`"),
                            )))
                        }
                    },
                };
                let symmetric = symmetric_pairs(l, &d.annotations)?;
                let id = HashId(l.pipe.hashes.len() as u32);
                l.pipe.hashes.push(ir::HashUnit {
                    name: name.clone(),
                    algorithm,
                    width,
                });
                l.spans.hashes.push(span);
                Kind::Hash {
                    id,
                    width,
                    symmetric,
                }
            }
            "CRCPolynomial" => {
                c.arity(l, 6, 6)?;
                let Some(t) = c.targ(0) else {
                    return Err(l.err(
                        Diagnostic::error("`CRCPolynomial` needs its width type")
                            .with_primary(i.ty.span, "here"),
                    ));
                };
                let Some(width) = t.scalar_width().filter(|w| [8, 16, 32, 64].contains(w)) else {
                    return Err(l.err(
                        Diagnostic::error(format!("CRC width `{t}` is not supported"))
                            .with_primary(i.ty.span, "unsupported width")
                            .with_help("use bit<8>, bit<16>, bit<32> or bit<64>"),
                    ));
                };
                let poly = l.const_value(args[0], &t)? as u64;
                let reversed = l.const_value(args[1], &Ty::Bool)? != 0;
                let msb = l.const_value(args[2], &Ty::Bool)? != 0;
                let extended = l.const_value(args[3], &Ty::Bool)? != 0;
                let init = l.const_value(args[4], &t)? as u64;
                let xor = l.const_value(args[5], &t)? as u64;
                Kind::CrcPoly(CrcSpec {
                    width,
                    poly,
                    reversed,
                    msb,
                    extended,
                    init,
                    xor,
                })
            }
            "Random" => {
                c.arity(l, 0, 0)?;
                let width = match c.targ(0) {
                    Some(Ty::Bit(w)) => w,
                    _ => {
                        return Err(l.err(
                            Diagnostic::error("`Random` needs its output type")
                                .with_primary(i.ty.span, "write `Random<bit<16>>()`"),
                        ))
                    }
                };
                Kind::Random { width }
            }
            _ => return Err(c.unsupported(l)),
        };
        Ok(kind)
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        _out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let (x, m) = (c.x, c.m);
        let args = c.args;
        let span = c.span;
        let nargs = c.args.len();
        let value = |e: ir::Expr, t: Ty| -> Res<Option<V>> { Ok(Some(V::Scalar(e, t))) };
        match (&x.kind, m) {
            (
                Kind::Hash {
                    id,
                    width,
                    symmetric,
                },
                "get",
            ) => {
                let [a] = args else {
                    return Err(l.arg_count("get", 1, nargs, span));
                };
                let inputs = if symmetric.is_empty() {
                    l.inputs(a)?
                } else {
                    l.symmetric_inputs(a, symmetric)?
                };
                if inputs.is_empty() {
                    // bf-p4c refuses a hash of nothing: no hash unit input to build.
                    return Err(l.err(
                        Diagnostic::error("`get` of a hash over no fields")
                            .with_primary(a.span, "an empty field list")
                            .with_help("hash at least one field, or use a constant"),
                    ));
                }
                value(
                    ir::Expr::Hash {
                        hash: *id,
                        inputs,
                        width: *width,
                    },
                    Ty::Bit(*width),
                )
            }
            (Kind::Random { width }, "get") => {
                if nargs != 0 {
                    return Err(l.arg_count("get", 0, nargs, span));
                }
                value(ir::Expr::Random { width: *width }, Ty::Bit(*width))
            }
            _ => l.no_method_of(c),
        }
    }
}

/// The CRCs of `HashAlgorithm_t` as bf-p4c and the driver define them (bf-utils' dynamic
/// hash): CRC-8/SMBUS, CRC-16/ARC, CRC-32/ISO-HDLC and CRC-64/ECMA-182, extended, so a hash
/// wider than the CRC repeats it (a CRC16 into `bit<32>` is `crc ++ crc`) as Tofino does.
fn crc_preset(name: &str) -> Option<CrcSpec> {
    use pipeline::externs::crc::presets;
    Some(match name {
        "CRC8" => presets::CRC8,
        "CRC16" => presets::CRC16,
        "CRC32" => presets::CRC32,
        "CRC64" => presets::CRC64,
        _ => return None,
    })
}

/// The `@symmetric("a", "b")` annotations of a `Hash` instance.
fn symmetric_pairs(
    l: &mut Lowerer<'_>,
    annos: &[ast::Annotation],
) -> Res<Vec<(String, String, Span)>> {
    let mut out = Vec::new();
    for a in annos.iter().filter(|a| a.name.name == "symmetric") {
        let names: Option<Vec<String>> = match &a.body {
            ast::AnnotationBody::Exprs(es) => es
                .iter()
                .map(|e| match &e.kind {
                    ast::ExprKind::String(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        match names.as_deref() {
            Some([x, y]) => out.push((x.clone(), y.clone(), a.span)),
            _ => {
                return Err(l.err(
                    Diagnostic::error("`@symmetric` takes two field names")
                        .with_primary(a.span, "malformed")
                        .with_help(
                            "write `@symmetric(\"hdr.ipv4.src_addr\", \"hdr.ipv4.dst_addr\")`",
                        ),
                ))
            }
        }
    }
    Ok(out)
}

/// True when the `@symmetric` name `annot` names the hash input written as `path`: the same
/// text, or (`exact == false`) the annotation, written from an outer control's names, ends with
/// the input's path past its first component (`ig_md.lkp.src` names `lkp_param.src`).
fn symmetric_names(annot: &str, path: &str, exact: bool) -> bool {
    if annot == path {
        return true;
    }
    if exact {
        return false;
    }
    match path.split_once('.') {
        Some((_, rest)) => annot.ends_with(&format!(".{rest}")),
        None => false,
    }
}

impl<'a> Lowerer<'a> {
    /// The inputs of `hash.get({...})` on a hash with `@symmetric` pairs. Tofino makes such a
    /// hash symmetric by feeding both fields of a pair into the same hash-matrix inputs, so
    /// the first field's slot carries `a ^ b` and the second's nothing (0): the hash is then
    /// the CRC of that stream, and swapping `a` and `b` cannot change it. [inf: bf-p4c's
    /// hash-matrix allocation; which slot keeps the XOR is not documented.]
    fn symmetric_inputs(
        &mut self,
        a: &'a ast::Argument,
        pairs: &[(String, String, Span)],
    ) -> Res<Vec<ir::Expr>> {
        let ast::ExprKind::List(elems) = &a.value.kind else {
            return self.inputs(a);
        };
        // Each element's path and its range in the flattened inputs.
        let mut out = Vec::new();
        let mut slots: Vec<(Option<String>, std::ops::Range<usize>)> = Vec::new();
        for e in elems {
            let start = out.len();
            let v = self.expr(e, None)?;
            flat_inputs(v, &mut out, self, e.span, false)?;
            slots.push((path_of(e), start..out.len()));
        }
        let find = |name: &str| -> Option<usize> {
            for exact in [true, false] {
                let hits: Vec<usize> = slots
                    .iter()
                    .enumerate()
                    .filter(|(_, (p, _))| {
                        p.as_deref()
                            .is_some_and(|p| symmetric_names(name, p, exact))
                    })
                    .map(|(k, _)| k)
                    .collect();
                match hits.as_slice() {
                    [k] => return Some(*k),
                    [] => continue,
                    _ => return None,
                }
            }
            None
        };
        for (x, y, sp) in pairs {
            let (Some(i), Some(j)) = (find(x), find(y)) else {
                let missing = if find(x).is_none() { x } else { y };
                self.warn(
                    Diagnostic::warning(format!(
                        "`@symmetric`: `{missing}` is not one input of this `get`; this pair is not made symmetric"
                    ))
                    .with_primary(*sp, "pair ignored")
                    .with_primary(a.span, "the hash inputs"),
                );
                continue;
            };
            let (ri, rj) = (slots[i].1.clone(), slots[j].1.clone());
            let width = |r: &std::ops::Range<usize>, out: &[ir::Expr]| {
                (r.len() == 1).then(|| out[r.start].width())
            };
            match (width(&ri, &out), width(&rj, &out)) {
                (Some(wi), Some(wj)) if wi == wj && i != j => {
                    let b = std::mem::replace(&mut out[rj.start], ir::Expr::constant(0, wj));
                    let av = std::mem::replace(&mut out[ri.start], ir::Expr::constant(0, wi));
                    out[ri.start] = ir::Expr::Binary {
                        op: ir::BinOp::Xor,
                        a: Box::new(av),
                        b: Box::new(b),
                        width: wi,
                        signed: false,
                    };
                }
                _ => {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`@symmetric(\"{x}\", \"{y}\")` needs two different fields of the same width"
                        ))
                        .with_primary(*sp, "here"),
                    ))
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::symmetric_names;

    #[test]
    fn symmetric_names_match_exactly_or_by_the_outer_path() {
        assert!(symmetric_names(
            "hdr.ipv4.src_addr",
            "hdr.ipv4.src_addr",
            true
        ));
        assert!(!symmetric_names("ig_md.lkp.src", "lkp_in.src", true));
        assert!(symmetric_names("ig_md.lkp.src", "lkp_in.src", false));
        assert!(!symmetric_names("ig_md.lkp.src", "lkp_in.dst", false));
        assert!(!symmetric_names("ig_md.lkp.src", "src", false));
    }
}
