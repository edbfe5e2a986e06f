//! PHV allocation for one gress, and [`Loc`], the storage tree a P4 value of that gress lives in.
//!
//! Headers are placed byte-aligned with their fields in wire order (so extract/emit are byte
//! copies); every other scalar (metadata fields, locals, hidden stack counters, temporaries)
//! starts on a byte boundary too, which keeps traces readable at a small cost in PHV bytes.

use std::rc::Rc;

use pipeline::ir::{self, FieldRef, HeaderId, RegWord, StackId};

use crate::check::types::{StructTy, Ty};

/// Where a P4 value lives (equal when it is the same storage).
#[derive(Debug, PartialEq)]
pub enum Loc {
    /// A scalar (bit, int, bool, enum, error) in the PHV.
    Field { f: FieldRef, ty: Ty },
    Header {
        id: HeaderId,
        ty: Rc<StructTy>,
        fields: Vec<Rc<Loc>>,
    },
    Struct {
        ty: Rc<StructTy>,
        fields: Vec<Rc<Loc>>,
    },
    Stack {
        /// The IR stack; `None` for a stack of header unions, whose members have their own
        /// (`unions`).
        id: Option<StackId>,
        elem: Ty,
        elems: Vec<Rc<Loc>>,
        next_index: FieldRef,
        /// A stack of header unions: per member of the union, by name, the IR stack of that
        /// member across the elements, all sharing `next_index` (`extract(u.next.h)`); empty
        /// for a header stack.
        unions: Vec<(String, StackId)>,
    },
    /// A header's `varbit<N>` field: `f` reserves the N bits, `len` holds the current length.
    Varbit {
        f: FieldRef,
        len: FieldRef,
        max: u16,
    },
    /// Inside a RegisterAction body: a word of the register cell.
    RegWord(RegWord, Ty),
    /// Inside a RegisterAction body: output `rvK` (K = 1; on Tofino 2 also 2 to 4).
    RegOut(u8, Ty),
}

impl Loc {
    /// The P4 type of the stored value.
    pub fn ty(&self) -> Ty {
        match self {
            Loc::Field { ty, .. } | Loc::RegWord(_, ty) | Loc::RegOut(_, ty) => ty.clone(),
            Loc::Header { ty, .. } => Ty::Header(ty.clone()),
            Loc::Varbit { max, .. } => Ty::Varbit(*max),
            Loc::Struct { ty, .. } if ty.name == TUPLE => {
                Ty::Tuple(ty.fields.iter().map(|(_, t)| t.clone()).collect())
            }
            Loc::Struct { ty, .. } => Ty::Struct(ty.clone()),
            Loc::Stack { elem, elems, .. } => Ty::Stack(Box::new(elem.clone()), elems.len() as u32),
        }
    }

    /// Every header instance inside this value, in field order (deparser emit order).
    pub fn headers(&self, out: &mut Vec<HeaderId>) {
        match self {
            Loc::Header { id, .. } => out.push(*id),
            Loc::Struct { fields, .. } => fields.iter().for_each(|f| f.headers(out)),
            Loc::Stack { elems, .. } => elems.iter().for_each(|f| f.headers(out)),
            _ => {}
        }
    }

    /// Every scalar field inside this value, in order, as IR expressions.
    pub fn scalars(&self, out: &mut Vec<ir::Expr>) {
        match self {
            // Wider than a value: its pieces, which concatenate to the same bits.
            Loc::Field { f, .. } => out.extend(f.chunks().map(|(p, _, _)| ir::Expr::Field(p))),
            // All N bits: the value, then zeros (a checksum over the header sums the same).
            Loc::Varbit { f, .. } => out.extend(f.chunks().map(|(p, _, _)| ir::Expr::Field(p))),
            Loc::RegWord(w, _) => out.push(ir::Expr::RegValue(*w)),
            Loc::Header { fields, .. } | Loc::Struct { fields, .. } => {
                fields.iter().for_each(|f| f.scalars(out))
            }
            Loc::Stack { elems, .. } => elems.iter().for_each(|f| f.scalars(out)),
            Loc::RegOut(..) => {}
        }
    }

    /// Every scalar field inside this value, as field references.
    pub fn field_refs(&self, out: &mut Vec<FieldRef>) {
        match self {
            Loc::Field { f, .. } | Loc::Varbit { f, .. } => out.push(*f),
            Loc::Header { fields, .. } | Loc::Struct { fields, .. } => {
                fields.iter().for_each(|f| f.field_refs(out))
            }
            Loc::Stack { elems, .. } => elems.iter().for_each(|f| f.field_refs(out)),
            _ => {}
        }
    }

    /// Child `name` of a header or struct.
    pub fn field(&self, name: &str) -> Option<Rc<Loc>> {
        match self {
            Loc::Header { ty, fields, .. } | Loc::Struct { ty, fields } => {
                ty.field(name).and_then(|(i, _)| fields.get(i).cloned())
            }
            _ => None,
        }
    }
}

/// The name of the struct shape a `tuple<...>` value is stored as: its elements are fields
/// `0`, `1`, ... (a keyword, so no declared struct has it).
pub const TUPLE: &str = "tuple";

/// The storage shape of a `tuple<...>` value: a struct of fields `0`, `1`, ...
pub fn tuple_shape(elems: &[Ty]) -> Rc<StructTy> {
    Rc::new(StructTy {
        name: TUPLE.to_string(),
        fields: elems
            .iter()
            .enumerate()
            .map(|(i, t)| (i.to_string(), t.clone()))
            .collect(),
        union: false,
    })
}

/// Builds one gress's [`ir::PhvLayout`].
#[derive(Debug, Default)]
pub struct PhvAlloc {
    bits: u32,
    pub layout: ir::PhvLayout,
    /// For each member header of a header union, the union's other members (made invalid
    /// when it becomes valid).
    pub union_peers: std::collections::HashMap<HeaderId, Vec<HeaderId>>,
}

/// Bits of a varbit field's hidden length (in bits; a field is at most 2048 bits).
const VARBIT_LEN_WIDTH: u16 = 16;

/// The PHV is addressed with `u32` bit offsets; far below that, a program this large is surely
/// a mistake.
const MAX_PHV_BITS: u32 = 1 << 24;

impl PhvAlloc {
    pub fn new() -> PhvAlloc {
        PhvAlloc::default()
    }

    fn align(&mut self) {
        self.bits = self.bits.div_ceil(8) * 8;
    }

    fn take(&mut self, width: u32) -> Result<u32, String> {
        let at = self.bits;
        self.bits = self
            .bits
            .checked_add(width)
            .filter(|b| *b <= MAX_PHV_BITS)
            .ok_or_else(|| "the program's PHV exceeds 2 MiB".to_string())?;
        Ok(at)
    }

    /// A byte-aligned scalar field named `name`.
    pub fn scalar(&mut self, name: &str, ty: &Ty) -> Result<Rc<Loc>, String> {
        let w = ty
            .scalar_width()
            .ok_or_else(|| format!("`{name}` of type `{ty}` cannot be stored in the PHV"))?;
        self.align();
        let offset = self.take(u32::from(w))?;
        let f = FieldRef { offset, width: w };
        self.layout.fields.push(ir::FieldInfo {
            name: name.to_string(),
            field: f,
            signed: ty.is_signed(),
        });
        Ok(Rc::new(Loc::Field { f, ty: ty.clone() }))
    }

    /// A hidden scalar (temporaries, stack counters, written flags): a name no P4 path spells
    /// (`$`-prefixed, or with a space).
    pub fn hidden(&mut self, name: &str, width: u16) -> Result<FieldRef, String> {
        match &*self.scalar(name, &Ty::Bit(width))? {
            Loc::Field { f, .. } => Ok(*f),
            _ => Err("internal: hidden field is not a field".into()),
        }
    }

    /// Storage for a value of type `ty` named `name` (headers, structs, stacks, scalars).
    pub fn value(&mut self, name: &str, ty: &Ty) -> Result<Rc<Loc>, String> {
        match ty {
            Ty::Header(s) => self.header(name, s),
            Ty::Tuple(ts) => self.value(name, &Ty::Struct(tuple_shape(ts))),
            Ty::Struct(s) => {
                let mut fields = Vec::with_capacity(s.fields.len());
                for (fname, fty) in &s.fields {
                    fields.push(self.value(&format!("{name}.{fname}"), fty)?);
                }
                if s.union {
                    let mut ids = Vec::new();
                    fields.iter().for_each(|f| f.headers(&mut ids));
                    for id in &ids {
                        let peers = ids.iter().copied().filter(|p| p != id).collect();
                        self.union_peers.insert(*id, peers);
                    }
                }
                Ok(Rc::new(Loc::Struct {
                    ty: s.clone(),
                    fields,
                }))
            }
            Ty::Stack(elem, n) if matches!(&**elem, Ty::Struct(s) if s.union) => {
                let elems = (0..*n)
                    .map(|i| self.value(&format!("{name}[{i}]"), elem))
                    .collect::<Result<Vec<_>, _>>()?;
                let w = (32 - n.leading_zeros()).max(1) as u16;
                let next_index = self.hidden(&format!("{name}.$nextIndex"), w)?;
                let unions = self.union_member_stacks(name, elem, &elems, next_index);
                Ok(Rc::new(Loc::Stack {
                    id: None,
                    elem: (**elem).clone(),
                    elems,
                    next_index,
                    unions,
                }))
            }
            Ty::Stack(elem, n) => {
                let Ty::Header(s) = &**elem else {
                    return Err(format!("stack `{name}` of non-header type `{elem}`"));
                };
                let mut elems = Vec::new();
                let mut ids = Vec::new();
                for i in 0..*n {
                    let h = self.header(&format!("{name}[{i}]"), s)?;
                    if let Loc::Header { id, .. } = &*h {
                        ids.push(*id);
                    }
                    elems.push(h);
                }
                let w = (32 - n.leading_zeros()).max(1) as u16;
                let next_index = self.hidden(&format!("{name}.$nextIndex"), w)?;
                let id = StackId(self.layout.stacks.len() as u32);
                self.layout.stacks.push(ir::StackInfo {
                    name: name.to_string(),
                    elements: ids,
                    next_index,
                });
                Ok(Rc::new(Loc::Stack {
                    id: Some(id),
                    elem: (**elem).clone(),
                    elems,
                    next_index,
                    unions: Vec::new(),
                }))
            }
            other => self.scalar(name, other),
        }
    }

    /// The IR stacks of a stack of header unions `name`: one per member of the union type
    /// `elem`, over that member's header in each element, sharing the stack's `next_index`
    /// (so `extract(u.next.h)` takes element `nextIndex`'s `h` and moves the one cursor on).
    fn union_member_stacks(
        &mut self,
        name: &str,
        elem: &Ty,
        elems: &[Rc<Loc>],
        next_index: FieldRef,
    ) -> Vec<(String, StackId)> {
        let Ty::Struct(u) = elem else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, (member, _)) in u.fields.iter().enumerate() {
            let headers = elems.iter().map(|e| match &**e {
                Loc::Struct { fields, .. } => match fields.get(k).map(|f| &**f) {
                    Some(Loc::Header { id, .. }) => Some(*id),
                    _ => None,
                },
                _ => None,
            });
            let Some(elements) = headers.collect::<Option<Vec<HeaderId>>>() else {
                continue;
            };
            let id = StackId(self.layout.stacks.len() as u32);
            self.layout.stacks.push(ir::StackInfo {
                name: format!("{name}.{member}"),
                elements,
                next_index,
            });
            out.push((member.clone(), id));
        }
        out
    }

    fn header(&mut self, name: &str, s: &Rc<StructTy>) -> Result<Rc<Loc>, String> {
        let bits = Ty::Header(s.clone()).max_flat_width().unwrap_or(0);
        if !bits.is_multiple_of(8) {
            return Err(format!(
                "header type `{}` is {bits} bits long, not a whole number of bytes",
                s.name
            ));
        }
        self.align();
        let start = self.take(bits)?;
        let id = HeaderId(self.layout.headers.len() as u32);
        let len = if Ty::Header(s.clone()).has_varbit() {
            Some(self.hidden(&format!("{name}.$length"), VARBIT_LEN_WIDTH)?)
        } else {
            None
        };
        let first_field = self.layout.fields.len() as u32;
        let mut at = start;
        let fields = self.header_fields(name, s, &mut at, len);
        for f in &fields {
            if let (Loc::Varbit { f, .. }, Some(len)) = (&**f, len) {
                let (field, len) = (*f, len);
                self.layout.varbits.push(ir::VarbitInfo {
                    header: id,
                    field,
                    len,
                });
            }
        }
        self.layout.headers.push(ir::HeaderInfo {
            name: name.to_string(),
            type_name: s.name.clone(),
            byte_offset: start / 8,
            byte_len: bits / 8,
            fields: first_field..self.layout.fields.len() as u32,
        });
        Ok(Rc::new(Loc::Header {
            id,
            ty: s.clone(),
            fields,
        }))
    }

    /// The fields of a header laid out from bit `at` in declaration order; a struct-typed field
    /// (P4_16 §7.2.2) is flattened in place and stays addressable as a struct.
    fn header_fields(
        &mut self,
        prefix: &str,
        s: &StructTy,
        at: &mut u32,
        len: Option<FieldRef>,
    ) -> Vec<Rc<Loc>> {
        let mut fields = Vec::with_capacity(s.fields.len());
        for (fname, fty) in &s.fields {
            let name = format!("{prefix}.{fname}");
            if let Ty::Struct(inner) = fty {
                let sub = self.header_fields(&name, inner, at, None);
                fields.push(Rc::new(Loc::Struct {
                    ty: inner.clone(),
                    fields: sub,
                }));
                continue;
            }
            let width = match fty {
                Ty::Varbit(n) => *n,
                t => t.scalar_width().unwrap_or(0),
            };
            let f = FieldRef { offset: *at, width };
            *at += u32::from(f.width);
            self.layout.fields.push(ir::FieldInfo {
                name,
                field: f,
                signed: fty.is_signed(),
            });
            fields.push(Rc::new(match (fty, len) {
                (Ty::Varbit(max), Some(len)) => Loc::Varbit { f, len, max: *max },
                _ => Loc::Field { f, ty: fty.clone() },
            }));
        }
        fields
    }

    /// The finished layout.
    pub fn finish(mut self) -> ir::PhvLayout {
        self.layout.bytes = self.bits.div_ceil(8);
        self.layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_byte_aligned_in_wire_order() {
        let h = Rc::new(StructTy {
            name: "h_t".into(),
            fields: vec![("a".into(), Ty::Bit(4)), ("b".into(), Ty::Bit(12))],
            union: false,
        });
        let s = Rc::new(StructTy {
            name: "m_t".into(),
            fields: vec![
                ("flag".into(), Ty::Bool),
                ("h".into(), Ty::Header(h.clone())),
            ],
            union: false,
        });
        let mut p = PhvAlloc::new();
        let loc = p.value("meta", &Ty::Struct(s)).unwrap();
        let stack = p
            .value("hdr.st", &Ty::Stack(Box::new(Ty::Header(h)), 2))
            .unwrap();
        let l = p.finish();
        assert_eq!(l.headers[0].name, "meta.h");
        assert_eq!(l.headers[0].byte_offset, 1);
        assert_eq!(l.headers[0].byte_len, 2);
        assert_eq!(l.fields[1].name, "meta.h.a");
        assert_eq!(
            l.fields[2].field,
            FieldRef {
                offset: 12,
                width: 12
            }
        );
        assert_eq!(l.stacks[0].elements, vec![HeaderId(1), HeaderId(2)]);
        assert_eq!(l.stacks[0].next_index.width, 2);
        assert_eq!(l.bytes, 8);
        let mut hs = Vec::new();
        loc.headers(&mut hs);
        stack.headers(&mut hs);
        assert_eq!(hs.len(), 3);
    }

    #[test]
    fn odd_headers_are_refused() {
        let h = Rc::new(StructTy {
            name: "odd_t".into(),
            fields: vec![("a".into(), Ty::Bit(3))],
            union: false,
        });
        assert!(PhvAlloc::new().value("x", &Ty::Header(h)).is_err());
    }
}
