//! The interpreted form of an SWX pipeline: the statements [`crate::swx_spec`] read from a spec,
//! configured through `rte_swx_pipeline_*` calls (instructions go to DPDK as written).

use std::ffi::CString;

use dpdk_sys as sys;

pub use crate::swx_spec::{check_no_drop, parse, Stmt, Table};

use super::SwxError;

fn err(line: usize, msg: impl Into<String>) -> SwxError {
    SwxError::Spec {
        line: line as u32,
        msg: msg.into(),
        code: -22,
    }
}

fn cstr(s: &str) -> Result<CString, SwxError> {
    CString::new(s).map_err(|_| err(0, format!("NUL in {s:?}")))
}

fn check(rc: i32, what: &str) -> Result<(), SwxError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(SwxError::Spec {
            line: 0,
            msg: format!("DPDK refused {what}"),
            code: rc,
        })
    }
}

/// Configures the pipeline `p` (ports already configured) with `stmts`.
pub(crate) fn configure(p: *mut sys::rte_swx_pipeline, stmts: &[Stmt]) -> Result<(), SwxError> {
    for s in stmts {
        configure_one(p, s)?;
    }
    Ok(())
}

fn ptrs(v: &[CString]) -> Vec<*const std::os::raw::c_char> {
    v.iter().map(|c| c.as_ptr()).collect()
}

fn configure_one(p: *mut sys::rte_swx_pipeline, s: &Stmt) -> Result<(), SwxError> {
    // SAFETY (every call below): `p` is a pipeline being configured; every string is a live
    // CString and every array a live Vec for the duration of the call (DPDK copies them).
    match s {
        Stmt::Struct { name, fields } => {
            let names: Vec<CString> = fields
                .iter()
                .map(|f| cstr(&f.0))
                .collect::<Result<_, _>>()?;
            let mut fp: Vec<sys::rte_swx_field_params> = names
                .iter()
                .zip(fields)
                .map(|(c, f)| sys::rte_swx_field_params {
                    name: c.as_ptr(),
                    n_bits: f.1,
                })
                .collect();
            let n = cstr(name)?;
            let rc = unsafe {
                sys::rte_swx_pipeline_struct_type_register(
                    p,
                    n.as_ptr(),
                    fp.as_mut_ptr(),
                    fp.len() as u32,
                    0,
                )
            };
            check(rc, &format!("struct {name}"))
        }
        Stmt::Header { name, ty } => {
            let (n, t) = (cstr(name)?, cstr(ty)?);
            let rc =
                unsafe { sys::rte_swx_pipeline_packet_header_register(p, n.as_ptr(), t.as_ptr()) };
            check(rc, &format!("header {name}"))
        }
        Stmt::Metadata { ty } => {
            let t = cstr(ty)?;
            let rc = unsafe { sys::rte_swx_pipeline_packet_metadata_register(p, t.as_ptr()) };
            check(rc, "metadata")
        }
        Stmt::Regarray { name, size, init } => {
            let n = cstr(name)?;
            let rc = unsafe { sys::rte_swx_pipeline_regarray_config(p, n.as_ptr(), *size, *init) };
            check(rc, &format!("regarray {name}"))
        }
        Stmt::Action { name, args, instrs } => {
            let n = cstr(name)?;
            let a = args.as_deref().map(cstr).transpose()?;
            let is: Vec<CString> = instrs.iter().map(|i| cstr(i)).collect::<Result<_, _>>()?;
            let mut ip = ptrs(&is);
            let rc = unsafe {
                sys::rte_swx_pipeline_action_config(
                    p,
                    n.as_ptr(),
                    a.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
                    ip.as_mut_ptr(),
                    ip.len() as u32,
                )
            };
            check(rc, &format!("action {name}"))
        }
        Stmt::Table(t) => configure_table(p, t),
        Stmt::Apply { instrs } => {
            let is: Vec<CString> = instrs.iter().map(|i| cstr(i)).collect::<Result<_, _>>()?;
            let mut ip = ptrs(&is);
            let rc = unsafe {
                sys::rte_swx_pipeline_instructions_config(p, ip.as_mut_ptr(), ip.len() as u32)
            };
            check(rc, "apply")
        }
    }
}

fn configure_table(p: *mut sys::rte_swx_pipeline, t: &Table) -> Result<(), SwxError> {
    let key_names: Vec<CString> = t
        .keys
        .iter()
        .map(|k| cstr(&k.0))
        .collect::<Result<_, _>>()?;
    let mut fields = Vec::with_capacity(t.keys.len());
    for (c, (f, m)) in key_names.iter().zip(&t.keys) {
        let match_type = match m.as_str() {
            "exact" => sys::RTE_SWX_TABLE_MATCH_EXACT,
            "lpm" => sys::RTE_SWX_TABLE_MATCH_LPM,
            "wildcard" => sys::RTE_SWX_TABLE_MATCH_WILDCARD,
            _ => return Err(err(0, format!("table {}: match type {m:?} of {f}", t.name))),
        };
        fields.push(sys::rte_swx_match_field_params {
            name: c.as_ptr(),
            match_type,
        });
    }
    let actions: Vec<CString> = t
        .actions
        .iter()
        .map(|a| cstr(a))
        .collect::<Result<_, _>>()?;
    let mut action_ptrs = ptrs(&actions);
    let mut for_entries = vec![1i32; actions.len()];
    let mut for_default = vec![1i32; actions.len()];
    let def = cstr(&t.default_action)?;
    let def_args = t.default_args.as_deref().map(cstr).transpose()?;
    let name = cstr(&t.name)?;
    let mut params = sys::rte_swx_pipeline_table_params {
        fields: fields.as_mut_ptr(),
        n_fields: fields.len() as u32,
        action_names: action_ptrs.as_mut_ptr(),
        action_is_for_table_entries: for_entries.as_mut_ptr(),
        action_is_for_default_entry: for_default.as_mut_ptr(),
        n_actions: actions.len() as u32,
        default_action_name: def.as_ptr(),
        default_action_args: def_args.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        default_action_is_const: 0,
        hash_func_name: std::ptr::null(),
    };
    // SAFETY: every pointer in `params` points into a live local above; DPDK copies the table
    // configuration before returning.
    let rc = unsafe {
        sys::rte_swx_pipeline_table_config(
            p,
            name.as_ptr(),
            &mut params,
            std::ptr::null(),
            std::ptr::null(),
            t.size,
        )
    };
    check(rc, &format!("table {}", t.name))
}
