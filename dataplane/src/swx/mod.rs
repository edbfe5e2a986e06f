//! DPDK's SWX pipeline (librte_pipeline, DPDK 22.11) in this process, fed from memory: the
//! baseline of `pisa bench pipeline --against swx` (docs/swx.md). An [`SwxPipeline`] is built
//! from a `.spec` text, compiled ([`compiled`]: spec → C → gcc → shared library, as DPDK's own
//! pipeline example runs it) when DPDK's internal pipeline headers are installed, else
//! interpreted ([`spec`]), and says which ([`SwxPipeline::mode`]). Its input ports hand out
//! frames from memory and its output ports count (and, when asked, keep) what it sends
//! ([`io`]); tables are filled through the control API (`rte_swx_ctl`) from entry lines in
//! DPDK's text form (`match ... action NAME ARG VALUE ...`).

pub mod compiled;
mod io;
pub mod spec;

use std::ffi::{CStr, CString};
use std::os::raw::c_char;

use dpdk_sys as sys;

pub use io::MAX_FRAME;
use io::{Io, PortObj};

/// What went wrong building or programming an SWX pipeline.
#[derive(Debug, thiserror::Error)]
pub enum SwxError {
    #[error("DPDK EAL: {0}")]
    Eal(String),
    #[error("SWX spec line {line}: {msg} ({code})")]
    Spec { line: u32, msg: String, code: i32 },
    #[error("compiling the SWX pipeline: {0}")]
    Compile(String),
    #[error("{step} failed ({code})")]
    Build { step: &'static str, code: i32 },
    #[error("SWX table {table}: entry {line:?}: {msg}")]
    Entry {
        table: String,
        line: String,
        msg: String,
    },
    #[error("{0}")]
    Io(String),
}

impl From<crate::swx_spec::SpecError> for SwxError {
    fn from(e: crate::swx_spec::SpecError) -> Self {
        SwxError::Spec {
            line: e.line,
            msg: e.msg,
            code: -22,
        }
    }
}

/// How the pipeline runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwxMode {
    /// Spec → C → gcc → `rte_swx_pipeline_build_from_lib`.
    Compiled,
    /// `rte_swx_pipeline_build` from the spec (DPDK's instruction interpreter); the reason the
    /// compiled form was not used.
    Interpreted { reason: String },
}

impl SwxMode {
    /// `compiled` or `interpreted`.
    pub fn label(&self) -> &'static str {
        match self {
            SwxMode::Compiled => "compiled",
            SwxMode::Interpreted { .. } => "interpreted",
        }
    }
}

/// Text of a C string DPDK returned (may be null).
pub(crate) fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: DPDK returns static NUL-terminated messages.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Rings named for the compiled form's placeholder input ports (freed on drop).
struct Rings(Vec<(String, *mut sys::rte_ring)>);

impl Rings {
    fn new(n: usize) -> Result<Self, SwxError> {
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let mut v = Rings(Vec::new());
        for _ in 0..n {
            let name = format!(
                "pisa_swx{}",
                SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            let c = CString::new(name.clone()).expect("no NUL");
            // SAFETY: the name is NUL-terminated; the EAL is initialised.
            let r = unsafe {
                sys::rte_ring_create(c.as_ptr(), 64, -1, sys::RING_F_SP_ENQ | sys::RING_F_SC_DEQ)
            };
            if r.is_null() {
                return Err(SwxError::Build {
                    step: "rte_ring_create",
                    code: -12,
                });
            }
            v.0.push((name, r));
        }
        Ok(v)
    }
}

impl Drop for Rings {
    fn drop(&mut self) {
        for (_, r) in &self.0 {
            // SAFETY: each ring was created above and is freed once, after the pipeline.
            unsafe { sys::rte_ring_free(*r) };
        }
    }
}

/// An SWX pipeline with in-memory ports. Runs on the thread that calls [`SwxPipeline::run`].
pub struct SwxPipeline {
    p: *mut sys::rte_swx_pipeline,
    ctl: *mut sys::rte_swx_ctl_pipeline,
    mode: SwxMode,
    io: Box<Io>,
    // The port objects the pipeline points at; declared after `p` users, freed after it.
    _ins: Vec<PortObj>,
    _outs: Vec<PortObj>,
    _rings: Option<Rings>,
}

impl SwxPipeline {
    /// Builds `spec` as pipeline `name` with `n_in` input ports (a power of two, as SWX polls
    /// them round robin) and `n_out` output ports. The build adds a drop port after those (a
    /// DPDK sink, which frees mbufs): a spec run here must not `drop` (it sends to a port of
    /// its own instead), as these packets are no mbufs.
    /// Compiled when DPDK's internal headers are found and `interpreted` is false, else
    /// interpreted.
    pub fn new(
        name: &str,
        spec: &str,
        n_in: usize,
        n_out: usize,
        interpreted: bool,
    ) -> Result<Self, SwxError> {
        crate::dpdk::ensure_eal_in_memory().map_err(|e| SwxError::Eal(e.to_string()))?;
        let stmts = spec::parse(spec)?;
        spec::check_no_drop(&stmts)?;
        let mut io = Box::new(Io::new(n_in, n_out));
        let iop: *mut Io = &mut *io;
        // The pipeline keeps pointers to these: the vectors are never resized.
        let port = |i: usize| PortObj {
            io: iop,
            port: i as u32,
        };
        let mut ins: Vec<PortObj> = (0..n_in).map(port).collect();
        let mut outs: Vec<PortObj> = (0..n_out).map(port).collect();
        let cname =
            CString::new(name).map_err(|_| SwxError::Io("NUL in the pipeline name".into()))?;
        let header_dir = if interpreted {
            Err("interpreted was asked for".to_string())
        } else {
            compiled::header_dir()
        };
        let (p, mode, rings) = match header_dir {
            Ok(dir) => {
                let rings = Rings::new(n_in)?;
                let names: Vec<String> = rings.0.iter().map(|r| r.0.clone()).collect();
                let p = compiled::build(&cname, spec, &dir, &names, &mut ins, &mut outs)?;
                (p, SwxMode::Compiled, Some(rings))
            }
            Err(reason) => (
                build_interpreted(&cname, &stmts, &mut ins, &mut outs)?,
                SwxMode::Interpreted { reason },
                None,
            ),
        };
        // SAFETY: `p` is a built pipeline.
        let ctl = unsafe { sys::rte_swx_ctl_pipeline_create(p) };
        let me = SwxPipeline {
            p,
            ctl,
            mode,
            io,
            _ins: ins,
            _outs: outs,
            _rings: rings,
        };
        if me.ctl.is_null() {
            return Err(SwxError::Build {
                step: "rte_swx_ctl_pipeline_create",
                code: -12,
            });
        }
        Ok(me)
    }

    /// Compiled or interpreted (and why).
    pub fn mode(&self) -> &SwxMode {
        &self.mode
    }

    /// Adds entries to `table` from lines in DPDK's text form, then commits them together.
    pub fn add_entries(&mut self, table: &str, lines: &[String]) -> Result<(), SwxError> {
        let t = CString::new(table).map_err(|_| SwxError::Io("NUL in a table name".into()))?;
        for line in lines {
            let fail = |msg: &str| SwxError::Entry {
                table: table.into(),
                line: line.clone(),
                msg: msg.into(),
            };
            let l = CString::new(line.as_str()).map_err(|_| fail("NUL in the line"))?;
            let mut blank = 0;
            // SAFETY: `ctl` is live; the strings are NUL-terminated; `blank` is an out-pointer.
            let e = unsafe {
                sys::rte_swx_ctl_pipeline_table_entry_read(
                    self.ctl,
                    t.as_ptr(),
                    l.as_ptr(),
                    &mut blank,
                )
            };
            if e.is_null() {
                if blank != 0 {
                    continue;
                }
                // SAFETY: nothing was staged by this line; drop what earlier lines staged.
                unsafe { sys::rte_swx_ctl_pipeline_abort(self.ctl) };
                return Err(fail("DPDK could not read it"));
            }
            // SAFETY: `e` was just read for this table; DPDK copies it when staging.
            let rc = unsafe { sys::rte_swx_ctl_pipeline_table_entry_add(self.ctl, t.as_ptr(), e) };
            free_entry(e);
            if rc != 0 {
                // SAFETY: as above.
                unsafe { sys::rte_swx_ctl_pipeline_abort(self.ctl) };
                return Err(fail(&format!("entry add failed ({rc})")));
            }
        }
        // SAFETY: `ctl` is live.
        let rc = unsafe { sys::rte_swx_ctl_pipeline_commit(self.ctl, 1) };
        if rc != 0 {
            return Err(SwxError::Entry {
                table: table.into(),
                line: String::new(),
                msg: format!("commit failed ({rc})"),
            });
        }
        Ok(())
    }

    /// Mirror session `id` sends its clones to output `port`.
    pub fn mirror_session(&mut self, id: u32, port: u32) -> Result<(), SwxError> {
        let mut params = sys::rte_swx_pipeline_mirroring_session_params {
            port_id: port,
            fast_clone: 1,
            truncation_length: 0,
        };
        // SAFETY: `p` is built; `params` is a valid struct for the call.
        let rc =
            unsafe { sys::rte_swx_ctl_pipeline_mirroring_session_set(self.p, id, &mut params) };
        if rc != 0 {
            return Err(SwxError::Build {
                step: "rte_swx_ctl_pipeline_mirroring_session_set",
                code: rc,
            });
        }
        Ok(())
    }

    /// The frames each input port hands out: `frames[i]` for port i; `looping` hands them
    /// out again after the last, else the port runs dry.
    pub fn feed(&mut self, frames: Vec<Vec<Vec<u8>>>, looping: bool) {
        for (q, f) in self.io.queues.iter_mut().zip(frames) {
            *q = (f, 0);
        }
        self.io.looping = looping;
    }

    /// Keep copies of what is sent from now on (`true`), or stop and forget them.
    pub fn capture(&mut self, on: bool) {
        self.io.capture = on.then(Vec::new);
    }

    /// What was sent since capturing started: (output port, bytes), in order.
    pub fn take_captured(&mut self) -> Vec<(u32, Vec<u8>)> {
        self.io
            .capture
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Runs `n` pipeline steps (instructions, or instruction groups when compiled).
    pub fn run(&mut self, n: u32) {
        // SAFETY: `p` is built, and its ports' objects live in `self`, which is borrowed
        // mutably for the run (no other access to `io` meanwhile).
        unsafe { sys::rte_swx_pipeline_run(self.p, n) };
    }

    /// Frames received so far.
    pub fn rx_packets(&self) -> u64 {
        self.io.rx_packets
    }

    /// Frames sent so far per output port.
    pub fn tx_packets(&self) -> &[u64] {
        &self.io.tx_packets
    }
}

impl Drop for SwxPipeline {
    fn drop(&mut self) {
        // SAFETY: both were created in `new` and are freed once; the port objects and rings
        // are dropped after this body.
        unsafe {
            sys::rte_swx_ctl_pipeline_free(self.ctl);
            sys::rte_swx_pipeline_free(self.p);
        }
    }
}

/// Frees an entry `rte_swx_ctl_pipeline_table_entry_read` allocated (its fields with malloc).
fn free_entry(e: *mut sys::rte_swx_table_entry) {
    // SAFETY: `e` and its key, mask and action data were malloc'ed by DPDK for us to free.
    unsafe {
        libc::free((*e).key.cast());
        libc::free((*e).key_mask.cast());
        libc::free((*e).action_data.cast());
        libc::free(e.cast());
    }
}

/// The interpreted form: ports of pisa's own types, the spec through the configuration API.
fn build_interpreted(
    name: &CStr,
    stmts: &[spec::Stmt],
    ins: &mut [PortObj],
    outs: &mut [PortObj],
) -> Result<*mut sys::rte_swx_pipeline, SwxError> {
    let mut p: *mut sys::rte_swx_pipeline = std::ptr::null_mut();
    // SAFETY: `p` is an out-pointer; the name is NUL-terminated.
    let rc = unsafe { sys::rte_swx_pipeline_config(&mut p, name.as_ptr(), 0) };
    if rc != 0 || p.is_null() {
        return Err(SwxError::Build {
            step: "rte_swx_pipeline_config",
            code: rc,
        });
    }
    let r = configure_interpreted(p, stmts, ins, outs);
    if let Err(e) = r {
        // SAFETY: `p` was configured above and is not used after this.
        unsafe { sys::rte_swx_pipeline_free(p) };
        return Err(e);
    }
    Ok(p)
}

fn configure_interpreted(
    p: *mut sys::rte_swx_pipeline,
    stmts: &[spec::Stmt],
    ins: &mut [PortObj],
    outs: &mut [PortObj],
) -> Result<(), SwxError> {
    let mut in_ops = sys::rte_swx_port_in_ops {
        create: Some(io::port_create),
        free: Some(io::port_free),
        pkt_rx: Some(io::pkt_rx),
        stats_read: Some(io::in_stats),
    };
    let mut out_ops = sys::rte_swx_port_out_ops {
        create: Some(io::port_create),
        free: Some(io::port_free),
        pkt_tx: Some(io::pkt_tx),
        pkt_fast_clone_tx: Some(io::pkt_fast_clone_tx),
        pkt_clone_tx: Some(io::pkt_clone_tx),
        flush: None,
        stats_read: Some(io::out_stats),
    };
    let step = |rc: i32, step: &'static str| {
        if rc == 0 {
            Ok(())
        } else {
            Err(SwxError::Build { step, code: rc })
        }
    };
    // SAFETY (the calls below): `p` is being configured; the ops are copied by DPDK; each port
    // argument is a boxed `PortObj` that outlives the pipeline.
    unsafe {
        let mut mirroring = sys::rte_swx_pipeline_mirroring_params {
            n_slots: 4,
            n_sessions: 64,
        };
        step(
            sys::rte_swx_pipeline_mirroring_config(p, &mut mirroring),
            "mirroring",
        )?;
        step(
            sys::rte_swx_pipeline_port_in_type_register(p, c"pisa_in".as_ptr(), &mut in_ops),
            "port in type",
        )?;
        step(
            sys::rte_swx_pipeline_port_out_type_register(p, c"pisa_out".as_ptr(), &mut out_ops),
            "port out type",
        )?;
        for (i, o) in ins.iter_mut().enumerate() {
            let a: *mut PortObj = o;
            step(
                sys::rte_swx_pipeline_port_in_config(p, i as u32, c"pisa_in".as_ptr(), a.cast()),
                "port in",
            )?;
        }
        for (i, o) in outs.iter_mut().enumerate() {
            let a: *mut PortObj = o;
            step(
                sys::rte_swx_pipeline_port_out_config(p, i as u32, c"pisa_out".as_ptr(), a.cast()),
                "port out",
            )?;
        }
    }
    spec::configure(p, stmts)?;
    // SAFETY: fully configured.
    step(
        unsafe { sys::rte_swx_pipeline_build(p) },
        "rte_swx_pipeline_build",
    )
}
