//! The compiled form of an SWX pipeline, as DPDK's own pipeline example runs it: the spec is
//! turned into C by `rte_swx_pipeline_codegen`, gcc builds that into a shared library in a
//! temporary directory, and `rte_swx_pipeline_build_from_lib` loads it. The generated C includes
//! `rte_swx_pipeline_internal.h` (and `rte_swx_pipeline_spec.h`), which Debian's libdpdk-dev does
//! not ship: they come from the dpdk source package (`scripts/dpdk-swx-headers.sh` puts them in
//! [`DEFAULT_HEADER_DIR`]; `PISA_SWX_INCLUDE` names another directory).

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

use dpdk_sys as sys;

use super::io::{self, PortObj};
use super::SwxError;

/// Where `scripts/dpdk-swx-headers.sh` installs DPDK's internal pipeline headers.
pub const DEFAULT_HEADER_DIR: &str = "/usr/local/include/pisa-dpdk-pipeline";
const INTERNAL_HEADER: &str = "rte_swx_pipeline_internal.h";
const ATTACH_PORTS_C: &str = include_str!("attach_ports.c");

/// The directory holding DPDK's internal pipeline headers, or why there is none.
pub fn header_dir() -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("PISA_SWX_INCLUDE") {
        dirs.push(d.into());
    }
    dirs.push(DEFAULT_HEADER_DIR.into());
    dirs.push("/usr/include/dpdk".into());
    for d in dirs {
        let ok = d.join(INTERNAL_HEADER).is_file() && d.join("rte_swx_pipeline_spec.h").is_file();
        if ok {
            return Ok(d);
        }
        tried.push(d.display().to_string());
    }
    Err(format!(
        "{INTERNAL_HEADER} (from Debian's dpdk source package, not in libdpdk-dev) is in none of \
         {}; scripts/dpdk-swx-headers.sh installs it",
        tried.join(", ")
    ))
}

type AttachFn = unsafe extern "C" fn(
    *mut sys::rte_swx_pipeline,
    u32,
    sys::rte_swx_port_in_pkt_rx_t,
    *mut *mut c_void,
    u32,
    sys::rte_swx_port_out_pkt_tx_t,
    sys::rte_swx_port_out_pkt_fast_clone_tx_t,
    sys::rte_swx_port_out_pkt_clone_tx_t,
    *mut *mut c_void,
) -> i32;

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        // `PISA_SWX_KEEP_BUILD=1` keeps the generated C and library for a look.
        if std::env::var_os("PISA_SWX_KEEP_BUILD").is_some() {
            eprintln!("SWX build kept in {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> Result<TempDir, SwxError> {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("pisa-swx-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| SwxError::Io(format!("{}: {e}", d.display())))?;
    Ok(TempDir(d))
}

fn fopen(path: &Path, mode: &CStr) -> Result<*mut sys::FILE, SwxError> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| SwxError::Io(format!("{}: NUL in path", path.display())))?;
    // SAFETY: both arguments are valid NUL-terminated strings.
    let f = unsafe { libc::fopen(c.as_ptr(), mode.as_ptr()) };
    if f.is_null() {
        return Err(SwxError::Io(format!(
            "{}: {}",
            path.display(),
            std::io::Error::last_os_error()
        )));
    }
    Ok(f.cast())
}

fn fclose(f: *mut sys::FILE) {
    // SAFETY: `f` came from `fopen` above and is closed once.
    unsafe { libc::fclose(f.cast()) };
}

/// Spec text to C with `rte_swx_pipeline_codegen`.
fn codegen(dir: &Path, spec: &str) -> Result<PathBuf, SwxError> {
    let spec_path = dir.join("pipeline.spec");
    let c_path = dir.join("pipeline.c");
    std::fs::write(&spec_path, spec).map_err(|e| SwxError::Io(e.to_string()))?;
    let fs = fopen(&spec_path, c"r")?;
    let fc = match fopen(&c_path, c"w") {
        Ok(f) => f,
        Err(e) => {
            fclose(fs);
            return Err(e);
        }
    };
    let mut line = 0u32;
    let mut msg: *const c_char = std::ptr::null();
    // SAFETY: both files are open; `line` and `msg` are valid out-pointers.
    let rc = unsafe { sys::rte_swx_pipeline_codegen(fs, fc, &mut line, &mut msg) };
    fclose(fs);
    fclose(fc);
    if rc != 0 {
        return Err(SwxError::Spec {
            line,
            msg: super::c_text(msg),
            code: rc,
        });
    }
    Ok(c_path)
}

/// gcc: the generated C and the port attach shim into one shared library.
fn gcc(dir: &Path, c_path: &Path, include: &Path) -> Result<PathBuf, SwxError> {
    let shim = dir.join("attach_ports.c");
    std::fs::write(&shim, ATTACH_PORTS_C).map_err(|e| SwxError::Io(e.to_string()))?;
    let so = dir.join("pipeline.so");
    let cflags = Command::new("pkg-config")
        .args(["--cflags", "libdpdk"])
        .output()
        .map_err(|e| SwxError::Compile(format!("pkg-config: {e}")))?;
    if !cflags.status.success() {
        return Err(SwxError::Compile(
            "pkg-config --cflags libdpdk failed".into(),
        ));
    }
    let cflags = String::from_utf8_lossy(&cflags.stdout).into_owned();
    let out = Command::new("gcc")
        .args([
            "-O3",
            "-fno-strict-aliasing",
            "-fPIC",
            "-shared",
            "-Wno-deprecated-declarations",
            "-w",
        ])
        .args(cflags.split_whitespace())
        .arg("-I")
        .arg(include)
        .arg(c_path)
        .arg(&shim)
        .arg("-o")
        .arg(&so)
        .output()
        .map_err(|e| SwxError::Compile(format!("gcc: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: String = err.lines().take(20).collect::<Vec<_>>().join("\n");
        return Err(SwxError::Compile(format!("gcc failed:\n{tail}")));
    }
    Ok(so)
}

/// Builds the compiled pipeline `name` from `spec` with `n_in` inputs and `n_out` outputs, its
/// ports attached to `ins` and `outs`.
pub(crate) fn build(
    name: &CStr,
    spec: &str,
    include: &Path,
    rings: &[String],
    ins: &mut [PortObj],
    outs: &mut [PortObj],
) -> Result<*mut sys::rte_swx_pipeline, SwxError> {
    let dir = temp_dir()?;
    let c_path = codegen(&dir.0, spec)?;
    let so = gcc(&dir.0, &c_path, include)?;
    // Placeholder ports: rings in (the caller made them), sinks out.
    let mut iospec = String::new();
    for (i, r) in rings.iter().enumerate() {
        iospec.push_str(&format!("port in {i} ring {r} bsz 1\n"));
    }
    for i in 0..outs.len() {
        iospec.push_str(&format!("port out {i} sink file none\n"));
    }
    let io_path = dir.0.join("pipeline.io");
    std::fs::write(&io_path, iospec).map_err(|e| SwxError::Io(e.to_string()))?;
    let fio = fopen(&io_path, c"r")?;
    let so_c = CString::new(so.as_os_str().as_encoded_bytes())
        .map_err(|_| SwxError::Io("NUL in the library path".into()))?;
    let mut p: *mut sys::rte_swx_pipeline = std::ptr::null_mut();
    // SAFETY: `p` is a valid out-pointer, the strings are NUL-terminated, `fio` is open.
    let rc = unsafe {
        sys::rte_swx_pipeline_build_from_lib(&mut p, name.as_ptr(), so_c.as_ptr(), fio, 0)
    };
    fclose(fio);
    if rc != 0 || p.is_null() {
        return Err(SwxError::Build {
            step: "rte_swx_pipeline_build_from_lib",
            code: rc,
        });
    }
    let attached = attach(p, &so_c, ins, outs);
    if let Err(e) = attached {
        // SAFETY: `p` was built above and is not used after this.
        unsafe { sys::rte_swx_pipeline_free(p) };
        return Err(e);
    }
    Ok(p)
}

/// Points the built pipeline's ports at ours through the shim in the library it loaded.
fn attach(
    p: *mut sys::rte_swx_pipeline,
    so: &CStr,
    ins: &mut [PortObj],
    outs: &mut [PortObj],
) -> Result<(), SwxError> {
    // SAFETY: dlopen of the library build_from_lib already holds open (a second reference,
    // kept for the process's lifetime like the pipeline's own).
    let h = unsafe { libc::dlopen(so.as_ptr(), libc::RTLD_NOW) };
    if h.is_null() {
        return Err(SwxError::Compile(
            "dlopen of the built pipeline failed".into(),
        ));
    }
    // SAFETY: `h` is a live handle; the name is NUL-terminated.
    let f = unsafe { libc::dlsym(h, c"pisa_swx_attach_ports".as_ptr()) };
    if f.is_null() {
        return Err(SwxError::Compile(
            "pisa_swx_attach_ports missing from the library".into(),
        ));
    }
    // SAFETY: the symbol is the shim's function with exactly this signature (attach_ports.c).
    let attach: AttachFn = unsafe { std::mem::transmute::<*mut c_void, AttachFn>(f) };
    let mut in_objs: Vec<*mut c_void> =
        ins.iter_mut().map(|b| (b as *mut PortObj).cast()).collect();
    let mut out_objs: Vec<*mut c_void> = outs
        .iter_mut()
        .map(|b| (b as *mut PortObj).cast())
        .collect();
    // SAFETY: `p` is a built pipeline; the arrays hold the live, boxed port objects the
    // `SwxPipeline` keeps for as long as the pipeline exists.
    let rc = unsafe {
        attach(
            p,
            in_objs.len() as u32,
            Some(io::pkt_rx),
            in_objs.as_mut_ptr(),
            out_objs.len() as u32,
            Some(io::pkt_tx),
            Some(io::pkt_fast_clone_tx),
            Some(io::pkt_clone_tx),
            out_objs.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(SwxError::Build {
            step: "pisa_swx_attach_ports",
            code: rc,
        });
    }
    Ok(())
}
