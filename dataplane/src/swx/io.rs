//! In-memory ports for an SWX pipeline: input ports hand out frames from memory (each copied
//! into one working buffer, which the pipeline edits in place), output ports count what the
//! pipeline sends and, when asked, keep a copy. The pipeline interleaves up to
//! `RTE_SWX_PIPELINE_THREADS_MAX` (16) packets on the calling thread (it switches packet at each
//! table lookup, to overlap the lookups' cache misses), so frames are copied into a ring of
//! [`SLOTS`] working buffers: a buffer is reused only after 63 later receives, long after its
//! packet was sent.

use std::os::raw::{c_int, c_void};

use dpdk_sys as sys;

/// Room in front of a frame in the working buffer (for headers a pipeline might push).
pub(crate) const HEADROOM: usize = 128;
/// Working buffers (more than the 16 packets a pipeline keeps in flight).
pub(crate) const SLOTS: usize = 64;
/// The largest frame an input port hands out.
pub const MAX_FRAME: usize = 2048;

/// The state every port of one pipeline shares: what the inputs hand out, what the outputs saw.
pub(crate) struct Io {
    /// Frames to hand out per input port, and the next one's index.
    pub(crate) queues: Vec<(Vec<Vec<u8>>, usize)>,
    /// Hand the frames out again and again (benchmark) or once each (check).
    pub(crate) looping: bool,
    /// The working buffers and the next one to use.
    pub(crate) bufs: Vec<Box<[u8]>>,
    pub(crate) next_buf: usize,
    pub(crate) rx_packets: u64,
    /// Packets sent per output port.
    pub(crate) tx_packets: Vec<u64>,
    /// Copies of what was sent, (port, bytes), while capturing.
    pub(crate) capture: Option<Vec<(u32, Vec<u8>)>>,
}

impl Io {
    pub(crate) fn new(n_in: usize, n_out: usize) -> Self {
        Io {
            queues: vec![(Vec::new(), 0); n_in],
            looping: false,
            bufs: (0..SLOTS)
                .map(|_| vec![0u8; HEADROOM + MAX_FRAME].into_boxed_slice())
                .collect(),
            next_buf: 0,
            rx_packets: 0,
            tx_packets: vec![0; n_out],
            capture: None,
        }
    }

    fn sent(&mut self, port: u32, pkt: &sys::rte_swx_pkt, truncate: u32) {
        if let Some(n) = self.tx_packets.get_mut(port as usize) {
            *n += 1;
        }
        if let Some(cap) = self.capture.as_mut() {
            let start = pkt.offset as usize;
            let mut len = pkt.length as usize;
            if truncate != 0 {
                len = len.min(truncate as usize);
            }
            // The handle is the buffer's slot (set by `pkt_rx`); checked before reading.
            let bytes = match self.bufs.get(pkt.handle as usize) {
                Some(b) if std::ptr::eq(pkt.pkt, b.as_ptr()) && start + len <= b.len() => {
                    b[start..start + len].to_vec()
                }
                _ => Vec::new(),
            };
            cap.push((port, bytes));
        }
    }
}

/// One port's handle, the `obj` the pipeline passes back to the port functions.
pub(crate) struct PortObj {
    pub(crate) io: *mut Io,
    pub(crate) port: u32,
}

/// Input port: the next frame of this port's queue, copied into the working buffer.
pub(crate) unsafe extern "C" fn pkt_rx(port: *mut c_void, pkt: *mut sys::rte_swx_pkt) -> c_int {
    // SAFETY: `port` is one of the `PortObj`s the owning `SwxPipeline` keeps alive (boxed, never
    // moved) for the pipeline's lifetime, and its `io` points at that pipeline's boxed `Io`;
    // the pipeline calls its ports from the one thread that runs it.
    let (obj, io) = unsafe {
        let obj = &*(port as *const PortObj);
        (obj, &mut *obj.io)
    };
    let Some((frames, next)) = io.queues.get_mut(obj.port as usize) else {
        return 0;
    };
    if *next >= frames.len() {
        if !io.looping || frames.is_empty() {
            return 0;
        }
        *next = 0;
    }
    let f = &frames[*next];
    *next += 1;
    let len = f.len().min(MAX_FRAME);
    let slot = io.next_buf;
    io.next_buf = (slot + 1) % SLOTS;
    let buf = &mut io.bufs[slot];
    buf[HEADROOM..HEADROOM + len].copy_from_slice(&f[..len]);
    io.rx_packets += 1;
    // SAFETY: `pkt` is the pipeline's own packet descriptor, valid for this call.
    unsafe {
        (*pkt).handle = slot as *mut c_void;
        (*pkt).pkt = buf.as_mut_ptr();
        (*pkt).offset = HEADROOM as u32;
        (*pkt).length = len as u32;
    }
    1
}

fn out_port<'a>(port: *mut c_void) -> (&'a PortObj, &'a mut Io) {
    // SAFETY: as in `pkt_rx`: the pointer is a live `PortObj` of the running pipeline.
    unsafe {
        let obj = &*(port as *const PortObj);
        (obj, &mut *obj.io)
    }
}

/// Output port: count (and capture) the packet; the buffer is reused by the next receive.
pub(crate) unsafe extern "C" fn pkt_tx(port: *mut c_void, pkt: *mut sys::rte_swx_pkt) {
    let (obj, io) = out_port(port);
    // SAFETY: `pkt` is the pipeline's packet descriptor, valid for this call.
    io.sent(obj.port, unsafe { &*pkt }, 0);
}

/// Output port, a clone of the packet (mirroring): sent as is.
pub(crate) unsafe extern "C" fn pkt_fast_clone_tx(port: *mut c_void, pkt: *mut sys::rte_swx_pkt) {
    let (obj, io) = out_port(port);
    // SAFETY: as in `pkt_tx`.
    io.sent(obj.port, unsafe { &*pkt }, 0);
}

/// Output port, a clone truncated to `truncation_length` bytes (0: whole).
pub(crate) unsafe extern "C" fn pkt_clone_tx(
    port: *mut c_void,
    pkt: *mut sys::rte_swx_pkt,
    truncation_length: u32,
) {
    let (obj, io) = out_port(port);
    // SAFETY: as in `pkt_tx`.
    io.sent(obj.port, unsafe { &*pkt }, truncation_length);
}

/// `create` of the port types registered for the interpreted pipeline: the argument is the
/// port's `PortObj`, which is the port.
pub(crate) unsafe extern "C" fn port_create(args: *mut c_void) -> *mut c_void {
    args
}

/// `free`: the `PortObj`s belong to the `SwxPipeline`.
pub(crate) unsafe extern "C" fn port_free(_port: *mut c_void) {}

pub(crate) unsafe extern "C" fn in_stats(
    _port: *mut c_void,
    stats: *mut sys::rte_swx_port_in_stats,
) {
    // SAFETY: the pipeline passes a valid stats struct to fill.
    if let Some(s) = unsafe { stats.as_mut() } {
        *s = sys::rte_swx_port_in_stats::default();
    }
}

pub(crate) unsafe extern "C" fn out_stats(
    _port: *mut c_void,
    stats: *mut sys::rte_swx_port_out_stats,
) {
    // SAFETY: the pipeline passes a valid stats struct to fill.
    if let Some(s) = unsafe { stats.as_mut() } {
        *s = sys::rte_swx_port_out_stats::default();
    }
}
