//! What in a program can ask for a drop: the tables' actions, the directly called actions and
//! the control-body assignments that write a gress's `drop_ctl`. A `drop_ctl` drop counter names
//! these as its possible causes; `pisa trace` names the one a packet took.

use crate::ir::{FieldRef, Gress, Intrinsic, Pipeline, Place, Stmt, TableBranches};

/// The places in `pl` that write `gress`'s `drop_ctl`: `table T -> A` for a table's action,
/// `A()` for an action called from the control, `an assignment in C` for the control itself.
pub fn drop_ctl_writers(pl: &Pipeline, gress: Gress) -> Vec<String> {
    let (gp, which) = match gress {
        Gress::Ingress => (&pl.ingress, Intrinsic::IgDprsrDropCtl),
        Gress::Egress => (&pl.egress, Intrinsic::EgDprsrDropCtl),
    };
    let Some(f) = gp.intrinsics.get(which) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in pl.tables.iter().filter(|t| t.gress == gress) {
        for r in &t.actions {
            if let Some(a) = pl.actions.get(r.action.index()) {
                if writes(pl, &a.body, f, 0) {
                    out.push(format!("table {} -> {}", t.name, a.name));
                }
            }
        }
    }
    in_body(pl, &gp.control.body, f, &gp.control.name, &mut out);
    out
}

/// Whether a block writes `f`, following direct action calls (depth-bounded: the frontend
/// rejects recursion; the bound keeps a malformed IR from looping).
fn writes(pl: &Pipeline, b: &[Stmt], f: FieldRef, depth: u8) -> bool {
    depth < 16
        && b.iter().any(|s| match s {
            Stmt::Assign {
                dst: Place::Field(d),
                ..
            } => d.offset == f.offset,
            Stmt::Assign {
                dst: Place::FieldSlice { field, .. },
                ..
            } => field.offset == f.offset,
            Stmt::If { then, els, .. } => {
                writes(pl, then, f, depth + 1) || writes(pl, els, f, depth + 1)
            }
            Stmt::CallAction { action, .. } => pl
                .actions
                .get(action.index())
                .is_some_and(|a| writes(pl, &a.body, f, depth + 1)),
            _ => false,
        })
}

/// The writers in a control body: direct calls and assignments, through ifs and table
/// branches.
fn in_body(pl: &Pipeline, b: &[Stmt], f: FieldRef, control: &str, out: &mut Vec<String>) {
    let mut add = |name: String| {
        if !out.contains(&name) {
            out.push(name);
        }
    };
    let mut nested: Vec<&[Stmt]> = Vec::new();
    for s in b {
        match s {
            Stmt::CallAction { action, .. } => {
                if let Some(a) = pl.actions.get(action.index()) {
                    if writes(pl, &a.body, f, 0) {
                        add(format!("{}()", a.name));
                    }
                }
            }
            Stmt::Assign { .. } if writes(pl, std::slice::from_ref(s), f, 0) => {
                add(format!("an assignment in {control}"));
            }
            Stmt::If { then, els, .. } => nested.extend([then.as_slice(), els.as_slice()]),
            Stmt::ApplyTable { branches, .. } => match branches {
                TableBranches::None => {}
                TableBranches::HitMiss { hit, miss } => {
                    nested.extend([hit.as_slice(), miss.as_slice()])
                }
                TableBranches::ActionRun { cases, default } => {
                    nested.extend(cases.iter().map(|(_, b)| b.as_slice()));
                    nested.push(default);
                }
            },
            _ => {}
        }
    }
    for b in nested {
        in_body(pl, b, f, control, out);
    }
}
