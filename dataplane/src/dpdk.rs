//! DPDK ports (cargo feature `dpdk`): a [`DpdkPort`] drives one DPDK ethdev with one receive
//! and one transmit queue, copying frames between DPDK mbufs and [`FrameBatch`]es.
//!
//! Port spec syntax (`PortSpec::Dpdk`):
//! - `dpdk:0000:3b:00.0` (or `dpdk:3b:00.0`): a PCI device, optionally followed by
//!   `,key=value` device arguments. The NIC must be bound to a DPDK-capable driver (vfio-pci)
//!   and the EAL must be allowed to scan PCI (see below).
//! - `dpdk:net_af_packet0,iface=veth0`, `dpdk:net_tap0,iface=tap0`, `dpdk:net_null0`: a virtual
//!   device, its driver name and instance number, then its arguments.
//!
//! The DPDK environment (EAL) is initialised once per process, when the first DPDK port opens.
//! Its arguments come from [`set_eal_args`] (the CLI's way in), else from the environment
//! variable `PISA_DPDK_EAL_ARGS` (whitespace-separated), else from the defaults
//! `--no-huge --no-pci -m 256 --no-shconf --no-telemetry --file-prefix pisa-<pid>` plus
//! `-l <first CPU>` — enough for virtual devices without hugepages or NICs; the defaults leave
//! out `--no-pci` when the first port opened is a PCI device. Devices are attached after EAL
//! init by hot-plug (so a `net_af_packet` vdev opens its socket in the network namespace of the
//! thread that opens the port) and detached again when the port is dropped. The EAL's runtime
//! directory `/var/run/dpdk/<prefix>` is removed right after init when the defaults are used
//! (`--no-shconf`: nothing in it is used afterwards).
//!
//! Each port has its own mbuf pool, sized for the largest frame the device accepts (at most
//! [`MAX_FRAME_LEN`]), so every frame travels in one segment; received multi-segment mbufs are
//! still copied whole. The pool is a single-producer/single-consumer ring (`ring_sp_sc`): only
//! the port itself allocates and frees its mbufs, always inside a call on `&mut self`, so at most
//! one thread touches the pool at a time. A process-wide multi-producer pool shared by the rx
//! and tx threads of different ports made them spin on each other: pisa's I/O threads are not
//! EAL lcores (no per-lcore cache), and a thread preempted between the ring's head and tail
//! updates keeps the other spinning for a whole time slice when both share a core
//! (`pisa bench forward`: 0.002 Mpps with the shared pool on a 2-core machine).

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::sync::{Mutex, OnceLock};

use dpdk_sys as sys;

use crate::port::{DropReason, FrameBatch, Port, PortError, StatsHandle, MAX_FRAME_LEN};
use crate::time::Nanos;

/// Frames moved per `rte_eth_rx_burst` / `rte_eth_tx_burst` call at most.
const BURST: usize = 64;
/// Descriptors per receive and per transmit queue.
const RING_SIZE: u16 = 1024;
/// Mbufs in each port's pool (a power of two minus one, as the mempool prefers): room for a
/// full receive ring, a full transmit ring and a burst each way.
const POOL_SIZE: u32 = 4095;
/// Numbers the ports' pools (mempool names are unique within the process).
static POOL_SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// What the EAL was initialised with, or why it failed (kept: the EAL cannot be retried).
static EAL: OnceLock<Result<EalState, String>> = OnceLock::new();
/// Arguments set by the CLI before the first port opens.
static EAL_ARGS: Mutex<Option<Vec<String>>> = Mutex::new(None);
/// Serialises device attach/detach and port setup (DPDK's control path is not thread-safe).
static CONTROL: Mutex<()> = Mutex::new(());

#[derive(Debug)]
struct EalState {
    args: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct PoolPtr(*mut sys::rte_mempool);
// SAFETY: the pool pointer belongs to one port and is only used inside calls on that port's
// `&mut self` (and freed in its Drop), so moving it to another thread with the port is sound.
unsafe impl Send for PoolPtr {}

/// Sets the EAL arguments (without the program name) used when the first DPDK port opens,
/// e.g. from the CLI's `--dpdk-eal "..."`. Fails with [`PortError::Config`] when the EAL is
/// already running (its arguments cannot change within a process).
pub fn set_eal_args(args: Vec<String>) -> Result<(), PortError> {
    if let Some(state) = EAL.get() {
        return Err(PortError::Config {
            port: "dpdk".into(),
            reason: format!(
                "the DPDK EAL is already initialised (with {:?}); set its arguments before \
                 opening the first DPDK port",
                state.as_ref().map(|s| &s.args)
            ),
        });
    }
    let mut slot = EAL_ARGS.lock().unwrap_or_else(|p| p.into_inner());
    *slot = Some(args);
    Ok(())
}

/// The arguments the EAL was initialised with (without the program name), once it is.
pub fn eal_args() -> Option<Vec<String>> {
    EAL.get()
        .and_then(|r| r.as_ref().ok())
        .map(|s| s.args.clone())
}

/// The parsed form of a `dpdk:` device string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DpdkDevice {
    /// Bus name for hot-plug: `pci` or `vdev`.
    pub bus: &'static str,
    /// Device name on that bus (normalised PCI address `0000:3b:00.0`, or the vdev name
    /// `net_af_packet0`); also the ethdev's name.
    pub name: String,
    /// Device arguments after the first comma (may be empty).
    pub args: String,
}

impl DpdkDevice {
    /// Parses a device string as written after `dpdk:`.
    pub fn parse(device: &str) -> Result<DpdkDevice, PortError> {
        let bad = |reason: String| PortError::Config {
            port: format!("dpdk:{device}"),
            reason,
        };
        let (name, args) = match device.split_once(',') {
            Some((n, a)) => (n, a),
            None => (device, ""),
        };
        if name.is_empty() {
            return Err(bad("empty device name".into()));
        }
        if device.bytes().any(|b| b == 0 || b.is_ascii_whitespace()) {
            return Err(bad("contains whitespace or NUL".into()));
        }
        if let Some(pci) = parse_pci(name) {
            return Ok(DpdkDevice {
                bus: "pci",
                name: pci,
                args: args.to_string(),
            });
        }
        if name.contains(':') {
            return Err(bad(format!(
                "{name:?} is neither a PCI address (DDDD:BB:DD.F) nor a virtual device name \
                 (like net_af_packet0)"
            )));
        }
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(bad(format!(
                "virtual device name {name:?} may only hold letters, digits and '_'"
            )));
        }
        Ok(DpdkDevice {
            bus: "vdev",
            name: name.to_string(),
            args: args.to_string(),
        })
    }

    /// The devargs string handed to `rte_dev_probe`.
    fn devargs(&self) -> String {
        if self.args.is_empty() {
            self.name.clone()
        } else {
            format!("{},{}", self.name, self.args)
        }
    }
}

/// Parses `DDDD:BB:DD.F` or `BB:DD.F` (hex) into the normalised `dddd:bb:dd.f` form.
fn parse_pci(s: &str) -> Option<String> {
    let parts: Vec<&str> = s.split(':').collect();
    let (domain, bus, devfn) = match parts.as_slice() {
        [d, b, df] => (*d, *b, *df),
        [b, df] => ("0000", *b, *df),
        _ => return None,
    };
    let (dev, func) = devfn.split_once('.')?;
    let hex = |x: &str, max_len: usize| -> Option<u32> {
        if x.is_empty() || x.len() > max_len || !x.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(x, 16).ok()
    };
    let domain = hex(domain, 8)?;
    let bus = hex(bus, 2)?;
    let dev = hex(dev, 2)?;
    let func = hex(func, 1)?;
    if dev > 0x1f || func > 7 {
        return None;
    }
    Some(format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:x}"))
}

/// A DPDK error code as text (`rte_strerror` knows DPDK's own codes beyond errno).
fn rte_err_text(code: c_int) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local NUL-terminated string
    // valid until the next call on this thread; we copy it out at once.
    unsafe {
        let p = sys::rte_strerror(code);
        if p.is_null() {
            format!("error {code}")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

fn dpdk_err(port: &str, op: &'static str, code: c_int) -> PortError {
    PortError::Os {
        port: port.to_string(),
        op,
        source: std::io::Error::other(format!(
            "DPDK returned {code} ({}); the EAL log above may say more",
            rte_err_text(code.abs())
        )),
    }
}

/// The first CPU this thread may run on (for `-l`), 0 when unknown.
fn first_allowed_cpu() -> usize {
    // SAFETY: cpu_set_t is plain data; all-zero is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size matches the set we pass.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return 0;
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: i is below CPU_SETSIZE, the set's bit count.
        .find(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .unwrap_or(0)
}

/// The default EAL arguments for a process whose first DPDK device is `first`.
fn default_eal_args(first: &DpdkDevice) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "-l".into(),
        first_allowed_cpu().to_string(),
        "--no-huge".into(),
        "-m".into(),
        "256".into(),
        "--no-shconf".into(),
        "--no-telemetry".into(),
        "--file-prefix".into(),
        format!("pisa-{}", std::process::id()),
        "--log-level".into(),
        "lib.eal:warning".into(),
    ];
    if first.bus != "pci" {
        a.push("--no-pci".into());
    }
    a
}

/// The value of `--file-prefix` in `args`, if any.
fn file_prefix(args: &[String]) -> Option<&str> {
    args.iter()
        .position(|a| a == "--file-prefix")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
        .or_else(|| args.iter().find_map(|a| a.strip_prefix("--file-prefix=")))
}

/// Initialises the EAL for in-memory use only (no device is attached): the defaults leave out PCI
/// and hugepages. What the SWX pipeline bench (`crate::swx`) needs; shares the one EAL of the
/// process with the DPDK ports.
pub fn ensure_eal_in_memory() -> Result<(), PortError> {
    ensure_eal(&DpdkDevice {
        bus: "vdev",
        name: "none".into(),
        args: String::new(),
    })
}

/// Initialises the EAL once per process (the first caller's device picks the defaults).
fn ensure_eal(first: &DpdkDevice) -> Result<(), PortError> {
    let state = EAL.get_or_init(|| {
        let explicit = EAL_ARGS.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let from_env = std::env::var("PISA_DPDK_EAL_ARGS")
            .ok()
            .map(|s| s.split_whitespace().map(str::to_string).collect::<Vec<_>>());
        let defaults = explicit.is_none() && from_env.is_none();
        let args = explicit
            .or(from_env)
            .unwrap_or_else(|| default_eal_args(first));
        init_eal(&args, defaults).map(|()| EalState { args })
    });
    match state {
        Ok(_) => Ok(()),
        Err(reason) => Err(PortError::Unsupported {
            backend: "dpdk",
            reason: reason.clone(),
        }),
    }
}

/// Runs `rte_eal_init` with `args`; restores this thread's CPU affinity afterwards (the EAL pins
/// its caller to the main lcore, which must not leak into pisa's own threads).
fn init_eal(args: &[String], remove_runtime_dir: bool) -> Result<(), String> {
    let mut owned: Vec<CString> = Vec::with_capacity(args.len() + 1);
    owned.push(CString::new("pisa").map_err(|e| e.to_string())?);
    for a in args {
        owned.push(
            CString::new(a.as_str())
                .map_err(|_| format!("EAL argument {a:?} contains a NUL byte"))?,
        );
    }
    // rte_eal_init may permute argv; give it a scratch array of pointers into `owned`.
    let mut argv: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    let argc = c_int::try_from(argv.len()).map_err(|_| "too many EAL arguments".to_string())?;

    // SAFETY: cpu_set_t is plain data; all-zero is a valid empty set.
    let mut saved: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size matches the set.
    let have_saved =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut saved) }
            == 0;
    // SAFETY: argv holds argc valid NUL-terminated strings that outlive the call (`owned` is
    // kept alive until the end of this function; the EAL copies what it keeps).
    let rc = unsafe { sys::rte_eal_init(argc, argv.as_mut_ptr()) };
    // SAFETY: reads the calling thread's rte_errno through our C accessor.
    let errno = unsafe { sys::pisa_dpdk_errno() };
    if have_saved {
        // SAFETY: restores the set read above for this thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &saved) };
    }
    if rc < 0 {
        return Err(format!(
            "DPDK EAL initialisation with {args:?} failed: {} (is this root, and are the EAL \
             arguments right?)",
            rte_err_text(errno)
        ));
    }
    if remove_runtime_dir {
        if let Some(prefix) = file_prefix(args) {
            remove_runtime_dir_for(prefix);
        }
    }
    tracing::info!(?args, "DPDK EAL initialised");
    Ok(())
}

/// Removes `/var/run/dpdk/<prefix>` (or the non-root equivalent) if it exists.
fn remove_runtime_dir_for(prefix: &str) {
    if prefix.is_empty() || prefix.contains('/') || prefix.contains("..") {
        return;
    }
    let mut dirs = vec![std::path::PathBuf::from("/var/run/dpdk").join(prefix)];
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR") {
        dirs.push(std::path::PathBuf::from(x).join("dpdk").join(prefix));
    }
    for d in dirs {
        if d.exists() {
            if let Err(e) = std::fs::remove_dir_all(&d) {
                tracing::warn!(dir = %d.display(), error = %e, "could not remove DPDK runtime dir");
            }
        }
    }
}

/// A new single-producer/single-consumer mbuf pool for one port whose buffers hold
/// `frame_len` bytes after the headroom.
fn create_pool(port: &str, frame_len: usize) -> Result<PoolPtr, PortError> {
    let fail = |reason: String| PortError::Config {
        port: port.to_string(),
        reason,
    };
    let seq = POOL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = CString::new(format!("pisa_mb{seq}")).map_err(|e| fail(e.to_string()))?;
    let room = (frame_len + sys::RTE_PKTMBUF_HEADROOM as usize).next_multiple_of(64);
    let room = u16::try_from(room).map_err(|_| fail("mbuf data room too large".into()))?;
    let ops = c"ring_sp_sc";
    // SAFETY: the EAL is initialised (callers ran ensure_eal); `name` and `ops` are valid C
    // strings that outlive the call; rte_socket_id is always callable after init.
    let p = unsafe {
        sys::rte_pktmbuf_pool_create_by_ops(
            name.as_ptr(),
            POOL_SIZE,
            0,
            0,
            room,
            sys::rte_socket_id() as c_int,
            ops.as_ptr(),
        )
    };
    if p.is_null() {
        // SAFETY: reads this thread's rte_errno.
        let e = unsafe { sys::pisa_dpdk_errno() };
        Err(fail(format!(
            "creating the mbuf pool failed: {}",
            rte_err_text(e)
        )))
    } else {
        Ok(PoolPtr(p))
    }
}

/// A DPDK ethdev with one receive and one transmit queue.
#[derive(Debug)]
pub struct DpdkPort {
    name: String,
    device: DpdkDevice,
    port_id: u16,
    /// The port's own mbuf pool (null until `setup` created it).
    pool: PoolPtr,
    stats: StatsHandle,
    max_frame_len: usize,
    /// Scratch array for bursts.
    mbufs: Vec<*mut sys::rte_mbuf>,
}

// SAFETY: the port owns its ethdev queues exclusively (one rx and one tx queue, used only
// through `&mut self`), the mbuf pointers in `mbufs` are scratch space that holds no mbuf
// between calls, and the pool is the port's own (see `PoolPtr`); moving the port to another
// thread is sound.
unsafe impl Send for DpdkPort {}

impl DpdkPort {
    /// Opens the device `device` (the text after `dpdk:`): initialises the EAL if this is the
    /// first DPDK port of the process, attaches the device, configures one rx and one tx queue
    /// and starts it (promiscuous, so it sees every frame like the other backends).
    pub fn open(device: &str) -> Result<DpdkPort, PortError> {
        let name = format!("dpdk:{device}");
        let dev = DpdkDevice::parse(device)?;
        ensure_eal(&dev)?;
        let _g = CONTROL.lock().unwrap_or_else(|p| p.into_inner());

        let devargs = CString::new(dev.devargs()).map_err(|_| PortError::Config {
            port: name.clone(),
            reason: "device string contains a NUL byte".into(),
        })?;
        // SAFETY: the EAL is initialised and `devargs` is a valid C string for the call.
        let rc = unsafe { sys::rte_dev_probe(devargs.as_ptr()) };
        if rc < 0 {
            return Err(dpdk_err(&name, "rte_dev_probe (attach device)", rc));
        }
        // From here on, a failure must detach the device again.
        let mut port = DpdkPort {
            name,
            device: dev,
            port_id: u16::MAX,
            pool: PoolPtr(std::ptr::null_mut()),
            stats: StatsHandle::new(),
            max_frame_len: MAX_FRAME_LEN,
            mbufs: vec![std::ptr::null_mut(); BURST],
        };
        match port.setup() {
            Ok(()) => Ok(port),
            Err(e) => {
                // Drop detaches (and stops/closes if the port id was found).
                drop(port);
                Err(e)
            }
        }
    }

    fn setup(&mut self) -> Result<(), PortError> {
        let cname = CString::new(self.device.name.as_str()).map_err(|_| PortError::Config {
            port: self.name.clone(),
            reason: "device name contains a NUL byte".into(),
        })?;
        let mut id: u16 = 0;
        // SAFETY: valid C string and a valid out pointer for the call.
        let rc = unsafe { sys::rte_eth_dev_get_port_by_name(cname.as_ptr(), &mut id) };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_dev_get_port_by_name", rc));
        }
        self.port_id = id;

        // SAFETY: rte_eth_dev_info is plain C data; all-zero is a valid initial value that
        // rte_eth_dev_info_get overwrites.
        let mut info: sys::rte_eth_dev_info = unsafe { std::mem::zeroed() };
        // SAFETY: `id` is a valid port and `info` a valid out pointer.
        let rc = unsafe { sys::rte_eth_dev_info_get(id, &mut info) };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_dev_info_get", rc));
        }
        if info.max_rx_pktlen > 0 {
            self.max_frame_len = self.max_frame_len.min(info.max_rx_pktlen as usize);
        }

        // At least 2 KiB per buffer: drivers that receive into fixed-size slots (the
        // `net_af_packet` vdev: 2048-byte ring frames) refuse smaller buffers.
        self.pool = create_pool(&self.name, self.max_frame_len.max(2048))?;

        // SAFETY: rte_eth_conf is plain C data; all-zero means "driver defaults", which is
        // what we want (no offloads, no RSS, one queue each way).
        let conf: sys::rte_eth_conf = unsafe { std::mem::zeroed() };
        // SAFETY: valid port id and configuration pointer.
        let rc = unsafe { sys::rte_eth_dev_configure(id, 1, 1, &conf) };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_dev_configure", rc));
        }
        // SAFETY: valid port id.
        let socket = unsafe { sys::rte_eth_dev_socket_id(id) };
        let socket = if socket < 0 { 0 } else { socket as u32 };
        // SAFETY: valid port id, queue 0 was configured above, null rxconf means defaults, and
        // the pool outlives the port.
        let rc = unsafe {
            sys::rte_eth_rx_queue_setup(id, 0, RING_SIZE, socket, std::ptr::null(), self.pool.0)
        };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_rx_queue_setup", rc));
        }
        // SAFETY: as above, for the transmit queue.
        let rc = unsafe { sys::rte_eth_tx_queue_setup(id, 0, RING_SIZE, socket, std::ptr::null()) };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_tx_queue_setup", rc));
        }
        // SAFETY: valid, configured port.
        let rc = unsafe { sys::rte_eth_dev_start(id) };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_dev_start", rc));
        }
        // Not every driver supports promiscuous mode (or needs it); failure is not fatal.
        // SAFETY: valid, started port.
        let rc = unsafe { sys::rte_eth_promiscuous_enable(id) };
        if rc < 0 && rc != -libc::ENOTSUP {
            tracing::debug!(port = %self.name, rc, "promiscuous mode not enabled");
        }
        tracing::info!(port = %self.name, port_id = id, "DPDK port started");
        Ok(())
    }

    /// The DPDK port id of the device.
    pub fn port_id(&self) -> u16 {
        self.port_id
    }

    /// The device this port drives.
    pub fn device(&self) -> &DpdkDevice {
        &self.device
    }

    /// Frames the NIC dropped for want of receive descriptors (`imissed`) and receive errors
    /// (`ierrors`), as the driver reports them.
    pub fn hw_rx_missed_errors(&self) -> Result<(u64, u64), PortError> {
        // SAFETY: rte_eth_stats is plain C data; all-zero is valid and is overwritten.
        let mut s: sys::rte_eth_stats = unsafe { std::mem::zeroed() };
        // SAFETY: valid port id and out pointer.
        let rc = unsafe { sys::rte_eth_stats_get(self.port_id, &mut s) };
        if rc < 0 {
            return Err(dpdk_err(&self.name, "rte_eth_stats_get", rc));
        }
        Ok((s.imissed, s.ierrors))
    }
}

/// Copies the whole (possibly chained) packet in `m` into `out`.
///
/// # Safety
/// `m` must point to a valid mbuf chain owned by the caller.
unsafe fn copy_packet(m: *const sys::rte_mbuf, out: &mut Vec<u8>) {
    let mut seg = m;
    while !seg.is_null() {
        // SAFETY: the caller guarantees a valid chain: each segment's data lies at
        // buf_addr + data_off with data_len bytes inside its buffer.
        unsafe {
            let s = &*seg;
            let data = (s.buf_addr as *const u8).add(usize::from(s.data_off));
            out.extend_from_slice(std::slice::from_raw_parts(data, usize::from(s.data_len)));
            seg = s.next;
        }
    }
}

impl Port for DpdkPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        let mut total = 0;
        while batch.remaining() > 0 {
            let want = batch.remaining().min(BURST) as u16;
            // SAFETY: the port is started, queue 0 exists, and `mbufs` has room for `want`
            // pointers.
            let n =
                unsafe { sys::rte_eth_rx_burst(self.port_id, 0, self.mbufs.as_mut_ptr(), want) };
            let n = usize::from(n);
            let (mut got, mut bytes) = (0u64, 0u64);
            for &m in &self.mbufs[..n] {
                // SAFETY: rx_burst returned `n` valid mbufs that we now own.
                let pkt_len = unsafe { (*m).pkt_len } as usize;
                if pkt_len > self.max_frame_len.max(MAX_FRAME_LEN) {
                    self.stats.counters().rx_drop(DropReason::TooLong, 1);
                } else if let Some(buf) = batch.push_slot(now) {
                    // SAFETY: `m` is a valid mbuf chain we own.
                    unsafe { copy_packet(m, buf) };
                    bytes += buf.len() as u64;
                    got += 1;
                }
                // SAFETY: we own `m` and no longer use it (its bytes were copied).
                unsafe { sys::rte_pktmbuf_free(m) };
            }
            self.stats.counters().add_rx(got, bytes);
            total += got as usize;
            if n < usize::from(want) {
                break;
            }
        }
        Ok(total)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, _now: Nanos) -> Result<usize, PortError> {
        let mut sent_total = 0usize;
        let frames = batch.frames();
        let mut i = 0;
        while i < frames.len() {
            // Fill up to BURST mbufs.
            let mut k = 0usize;
            let mut lens = [0u32; BURST];
            while k < BURST && i < frames.len() {
                let f = &frames[i].data;
                i += 1;
                if f.len() > self.max_frame_len {
                    self.stats.counters().tx_drop(DropReason::TooLong, 1);
                    continue;
                }
                let Ok(len16) = u16::try_from(f.len()) else {
                    self.stats.counters().tx_drop(DropReason::TooLong, 1);
                    continue;
                };
                // SAFETY: the pool is valid for the life of the process.
                let m = unsafe { sys::rte_pktmbuf_alloc(self.pool.0) };
                if m.is_null() {
                    self.stats.counters().tx_drop(DropReason::QueueFull, 1);
                    continue;
                }
                // SAFETY: `m` is a fresh mbuf we own; append reserves `len16` bytes of its
                // tailroom (it returns null when they do not fit).
                let dst = unsafe { sys::rte_pktmbuf_append(m, len16) } as *mut u8;
                if dst.is_null() {
                    // SAFETY: we own `m`.
                    unsafe { sys::rte_pktmbuf_free(m) };
                    self.stats.counters().tx_drop(DropReason::TooLong, 1);
                    continue;
                }
                // SAFETY: `dst` points to `f.len()` writable bytes inside `m`, which does not
                // overlap the frame's Vec.
                unsafe { std::ptr::copy_nonoverlapping(f.as_ptr(), dst, f.len()) };
                self.mbufs[k] = m;
                lens[k] = u32::from(len16);
                k += 1;
            }
            if k == 0 {
                continue;
            }
            // SAFETY: the port is started, queue 0 exists, and mbufs[..k] are valid mbufs we
            // own; tx_burst takes ownership of the first `sent` of them.
            let sent = usize::from(unsafe {
                sys::rte_eth_tx_burst(self.port_id, 0, self.mbufs.as_mut_ptr(), k as u16)
            });
            let bytes: u64 = lens[..sent].iter().map(|&l| u64::from(l)).sum();
            self.stats.counters().add_tx(sent as u64, bytes);
            for &m in &self.mbufs[sent..k] {
                // SAFETY: the driver did not take these; we still own them.
                unsafe { sys::rte_pktmbuf_free(m) };
            }
            if sent < k {
                self.stats
                    .counters()
                    .tx_drop(DropReason::QueueFull, (k - sent) as u64);
            }
            sent_total += sent;
        }
        batch.clear();
        Ok(sent_total)
    }

    fn stats_handle(&self) -> StatsHandle {
        self.stats.clone()
    }

    fn wait_readable(&mut self, timeout: std::time::Duration) -> Result<bool, PortError> {
        // DPDK queues have no file descriptor to wait on; poll briefly instead of sleeping
        // through the whole timeout.
        std::thread::sleep(timeout.min(std::time::Duration::from_micros(100)));
        Ok(true)
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }
}

impl Drop for DpdkPort {
    fn drop(&mut self) {
        let _g = CONTROL.lock().unwrap_or_else(|p| p.into_inner());
        if self.port_id != u16::MAX {
            // SAFETY: the port id is ours; stop and close are valid on a started or merely
            // configured port, and nothing uses its queues after this point.
            unsafe {
                let rc = sys::rte_eth_dev_stop(self.port_id);
                if rc < 0 {
                    tracing::warn!(port = %self.name, rc, "rte_eth_dev_stop failed");
                }
                let rc = sys::rte_eth_dev_close(self.port_id);
                if rc < 0 {
                    tracing::warn!(port = %self.name, rc, "rte_eth_dev_close failed");
                }
            }
        }
        let (Ok(bus), Ok(dev)) = (
            CString::new(self.device.bus),
            CString::new(self.device.name.as_str()),
        ) else {
            return;
        };
        // SAFETY: valid C strings for the call; detaching a device that is already gone
        // returns an error, which we only log.
        let rc = unsafe { sys::rte_eal_hotplug_remove(bus.as_ptr(), dev.as_ptr()) };
        if rc < 0 {
            tracing::debug!(port = %self.name, rc, "detaching the DPDK device failed");
        }
        if !self.pool.0.is_null() {
            // SAFETY: the device is stopped and closed (its queues gave their mbufs back) and
            // this port holds no mbuf between calls, so nothing uses the pool any more.
            unsafe { sys::rte_mempool_free(self.pool.0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vdev_and_pci_devices() {
        let d = DpdkDevice::parse("net_af_packet0,iface=veth0").unwrap();
        assert_eq!(d.bus, "vdev");
        assert_eq!(d.name, "net_af_packet0");
        assert_eq!(d.args, "iface=veth0");
        assert_eq!(d.devargs(), "net_af_packet0,iface=veth0");

        let d = DpdkDevice::parse("net_null0").unwrap();
        assert_eq!(
            (d.bus, d.name.as_str(), d.args.as_str()),
            ("vdev", "net_null0", "")
        );

        let d = DpdkDevice::parse("0000:3B:00.0").unwrap();
        assert_eq!((d.bus, d.name.as_str()), ("pci", "0000:3b:00.0"));
        let d = DpdkDevice::parse("3b:00.1,txq_inline=128").unwrap();
        assert_eq!((d.bus, d.name.as_str()), ("pci", "0000:3b:00.1"));
        assert_eq!(d.args, "txq_inline=128");
    }

    #[test]
    fn rejects_bad_devices() {
        for bad in [
            "",
            ",iface=x",
            "3b:00",
            "zz:00.0",
            "0000:3b:20.0",
            "0000:3b:00.8",
            "net af",
            "a/b",
            "x\0y",
        ] {
            assert!(
                matches!(DpdkDevice::parse(bad), Err(PortError::Config { .. })),
                "{bad:?} must be rejected"
            );
        }
    }

    #[test]
    fn default_args_and_file_prefix() {
        let vdev = DpdkDevice::parse("net_null0").unwrap();
        let a = default_eal_args(&vdev);
        assert!(a.iter().any(|x| x == "--no-pci"));
        assert!(a.iter().any(|x| x == "--no-huge"));
        assert_eq!(
            file_prefix(&a),
            Some(format!("pisa-{}", std::process::id()).as_str())
        );
        let pci = DpdkDevice::parse("0000:3b:00.0").unwrap();
        assert!(!default_eal_args(&pci).iter().any(|x| x == "--no-pci"));
        let custom = vec!["--file-prefix=abc".to_string()];
        assert_eq!(file_prefix(&custom), Some("abc"));
        assert_eq!(file_prefix(&[]), None);
    }
}
