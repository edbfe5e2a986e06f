//! `SelectorAction(sel)`: a stateful ALU program over an `ActionSelector`'s member-status bits
//! (one `bit<1>` per member of each group), the data plane's way to take members out of (or
//! back into) selection, e.g. for fast failover. The bits live in the register the selector
//! was given (`ActionSelector(ap, hash, mode, reg, max_group_size, num_groups)`), or in one
//! made here; `execute(index)` runs the `apply` body on bit `index` of it like a
//! `RegisterAction<bit<1>, bit<32>, bit<1>>`. The selector skips members whose bit is 0.
//! Which bit is which member is the layout of `pipeline::table::profile` (pisa's own: the
//! driver's is not public): group slot `s`, member position `i` → `s * max_group_size + i`.

use std::rc::Rc;

use pipeline::ir::{self, RegisterActionId, RegisterId, Target};

use super::register_action::{apply_outputs, register_action_body, RegisterActions};
use super::{Call, Ctor, ExternInst, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::{Binding, Lowerer, Res, V};

/// Most member-status bits pisa makes for a selector (its groups times the group size).
const MAX_STATUS_BITS: u64 = 1 << 22;

/// `SelectorAction`.
pub(super) struct SelectorActions;

impl ExternType for SelectorActions {
    fn names(&self) -> &'static [&'static str] {
        &["SelectorAction"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        c.arity(l, 1, 1)?;
        let profile = match l.resolve(c.args[0]) {
            Ok(Resolved::Obj(Binding::Extern(x))) => match &x.kind {
                Kind::ActionProfile { id } => Some(*id),
                _ => None,
            },
            _ => None,
        };
        let sel = profile.and_then(|p| {
            let ap = l.pipe.action_profiles.get(p.index())?;
            Some((p, ap.selector.clone()?))
        });
        let Some((p, sel)) = sel else {
            return Err(l.err(
                Diagnostic::error("a `SelectorAction` runs on an `ActionSelector`")
                    .with_primary(c.args[0].span, "not an ActionSelector"),
            ));
        };
        let register = match sel.status {
            Some(r) => r,
            None => status_register(l, c, p, &sel)?,
        };
        let bit = Ty::Bit(1);
        let this = Rc::new(ExternInst {
            name: c.name.clone(),
            type_name: c.tname.clone(),
            kind: Kind::SaluThis {
                out: Some(bit.clone()),
                conds: if l.target == Target::Tofino2 { 4 } else { 2 },
            },
        });
        let max_outs = apply_outputs(l, &c.tname);
        let want = [bit.clone()];
        let (body, more) = register_action_body(
            l,
            c.inst,
            &bit,
            &want,
            false,
            max_outs,
            Some(Binding::Extern(this)),
        )?;
        let id = RegisterActionId(l.pipe.register_actions.len() as u32);
        l.pipe.register_actions.push(ir::RegisterAction {
            name: c.name.clone(),
            register,
            body,
            output_width: 1,
            wide: false,
            overflow: None,
            underflow: None,
        });
        l.spans.register_actions.push(c.inst.name.span);
        Ok(Kind::RegisterAction {
            id,
            out: Some(bit),
            more,
            direct: false,
            index: Some(Ty::Bit(32)),
        })
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if c.m == "execute" && c.args.is_empty() {
            return Err(l.err(
                crate::check::unsupported(
                    c.span,
                    "`SelectorAction.execute()` without an index",
                    "running at the member the selector chose for this packet (the address of the selector's own lookup)",
                )
                .with_help("pass the member's status bit: `execute(index)`"),
            ));
        }
        RegisterActions.method(l, c, out)
    }
}

/// A register of `bit<1>` cells for `sel`'s member-status bits (the selector was given none):
/// every group's slot of `max_group_size` bits.
fn status_register<'a>(
    l: &mut Lowerer<'a>,
    c: &Ctor<'a>,
    p: ir::ActionProfileId,
    sel: &ir::ActionSelector,
) -> Res<RegisterId> {
    let bits = u64::from(sel.num_groups) * u64::from(sel.max_group_size);
    if bits > MAX_STATUS_BITS {
        return Err(l.err(
            Diagnostic::error(format!(
                "selector `{}`: {} groups of {} members are {bits} status bits, more than pisa \
                 makes ({MAX_STATUS_BITS})",
                sel.name, sel.num_groups, sel.max_group_size
            ))
            .with_primary(c.args[0].span, "its SelectorAction needs a bit per member")
            .with_help("give the ActionSelector fewer groups or a smaller max group size"),
        ));
    }
    let id = RegisterId(l.pipe.registers.len() as u32);
    l.pipe.registers.push(ir::Register {
        name: format!("{}$status", sel.name),
        gress: c.gress,
        size: bits as u32,
        width: 1,
        paired: false,
        word_names: None,
        initial_lo: 1,
        initial_hi: 0,
        direct_table: None,
        stage: 0,
    });
    l.spans.registers.push(c.inst.name.span);
    if let Some(s) = l
        .pipe
        .action_profiles
        .get_mut(p.index())
        .and_then(|ap| ap.selector.as_mut())
    {
        s.status = Some(id);
    }
    Ok(id)
}
