//! A pcap-file port: replays a capture on receive (timestamps from the file) and/or writes
//! a capture on send (timestamps from the `now` passed in, so a run under a virtual clock
//! writes a bit-identical file every time).
//!
//! Output files use nanosecond resolution (magic `a1b23c4d`), which libpcap, tshark and
//! scapy read; input files may use either resolution and either byte order.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, TsResolution};

use crate::port::{DropReason, FrameBatch, Port, PortError, StatsHandle, MAX_FRAME_LEN};
use crate::time::Nanos;

/// Snap length written into output headers.
const SNAPLEN: u32 = 262_144;

type BoxedRead = Box<dyn Read + Send>;
type BoxedWrite = Box<dyn Write + Send>;

/// The largest captured length of one record that is read (what libpcap and Wireshark
/// accept); a larger one means the file is damaged.
pub const MAX_RECORD: u32 = 262_144;

/// One record of a capture file, as tshark numbers it.
#[derive(Debug, Clone)]
pub struct Record {
    /// Position in the file, from 1 (tshark's frame number).
    pub number: u64,
    /// Timestamp.
    pub ts: Nanos,
    /// Length of the frame on the wire.
    pub orig_len: u32,
    /// The captured bytes (fewer than `orig_len` when the capture had a snap length).
    pub data: Vec<u8>,
}

impl Record {
    /// Whether the switch can take this frame, and if not why: captured shorter than it
    /// was on the wire (a snap length), shorter than an Ethernet header, or longer than
    /// [`MAX_FRAME_LEN`].
    pub fn check(&self) -> Result<(), DropReason> {
        if (self.orig_len as usize) > self.data.len() {
            Err(DropReason::Truncated)
        } else if self.data.len() < 14 {
            Err(DropReason::TooShort)
        } else if self.data.len() > MAX_FRAME_LEN {
            Err(DropReason::TooLong)
        } else {
            Ok(())
        }
    }

    /// Why the record is skipped, in words ("truncated: 96 of 1514 bytes captured").
    pub fn skip_reason(&self) -> Option<String> {
        let len = self.data.len();
        self.check().err().map(|r| match r {
            DropReason::Truncated => format!(
                "truncated: {len} of {} bytes captured (snap length)",
                self.orig_len
            ),
            DropReason::TooShort => format!("{len} bytes, shorter than an Ethernet header"),
            _ => format!("{len} bytes, longer than the largest frame ({MAX_FRAME_LEN})"),
        })
    }
}

/// Reads the records of a classic pcap file (either byte order, micro- or nanosecond
/// timestamps). Unlike pcap-file's reader it takes files whose records were cut by a snap
/// length (orig_len > snaplen, what `tcpdump -s` writes) and records longer than the
/// header's snap length, as libpcap and tshark do.
pub struct PcapRecords {
    r: BoxedRead,
    big_endian: bool,
    nanos: bool,
    /// The file header's link type.
    pub linktype: u32,
    next: u64,
}

impl PcapRecords {
    /// Reads the file header.
    pub fn new(mut r: BoxedRead) -> Result<PcapRecords, String> {
        let mut h = [0u8; 24];
        r.read_exact(&mut h)
            .map_err(|e| format!("not a pcap file: the 24-byte header cannot be read ({e})"))?;
        let magic = [h[0], h[1], h[2], h[3]];
        let (big_endian, nanos) = match magic {
            [0xa1, 0xb2, 0xc3, 0xd4] => (true, false),
            [0xd4, 0xc3, 0xb2, 0xa1] => (false, false),
            [0xa1, 0xb2, 0x3c, 0x4d] => (true, true),
            [0x4d, 0x3c, 0xb2, 0xa1] => (false, true),
            [0x0a, 0x0d, 0x0d, 0x0a] => {
                return Err("a pcapng file; pisa reads pcap: convert it with \
                            `editcap -F pcap IN.pcapng OUT.pcap` (or capture with dumpcap -P)"
                    .into())
            }
            _ => return Err(format!("not a pcap file (magic {:02x?})", magic)),
        };
        let u32_at = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        Ok(PcapRecords {
            r,
            big_endian,
            nanos,
            linktype: u32_at(20),
            next: 1,
        })
    }

    fn u32(&self, b: &[u8]) -> u32 {
        let b = [b[0], b[1], b[2], b[3]];
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    /// The next record; `None` at the end of the file. A record cut off by the end of the
    /// file or with an impossible length is an error naming its number.
    pub fn next_record(&mut self) -> Option<Result<Record, String>> {
        let number = self.next;
        let mut h = [0u8; 16];
        let mut got = 0;
        while got < 16 {
            match self.r.read(&mut h[got..]) {
                Ok(0) if got == 0 => return None,
                Ok(0) => {
                    return Some(Err(format!(
                        "record {number}: cut off in its header (the file ends)"
                    )))
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(format!("record {number}: {e}"))),
            }
        }
        let (secs, frac) = (self.u32(&h[0..4]), self.u32(&h[4..8]));
        let (incl, orig) = (self.u32(&h[8..12]), self.u32(&h[12..16]));
        if incl > MAX_RECORD {
            return Some(Err(format!(
                "record {number}: captured length {incl} is over {MAX_RECORD}: the file is damaged"
            )));
        }
        let mut data = vec![0u8; incl as usize];
        if let Err(e) = self.r.read_exact(&mut data) {
            return Some(Err(format!(
                "record {number}: cut off after its header ({incl} bytes announced): {e}"
            )));
        }
        self.next += 1;
        let sub = if self.nanos {
            u64::from(frac)
        } else {
            u64::from(frac) * 1000
        };
        Some(Ok(Record {
            number,
            ts: Nanos(u64::from(secs) * 1_000_000_000 + sub),
            orig_len: orig.max(incl),
            data,
        }))
    }
}

impl Iterator for PcapRecords {
    type Item = Result<Record, String>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

/// Opens a pcap file for reading its records.
pub fn read_records(path: &Path) -> Result<PcapRecords, String> {
    let f = File::open(path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    PcapRecords::new(Box::new(BufReader::new(f))).map_err(|e| format!("`{}`: {e}", path.display()))
}

struct Replay {
    path: String,
    reader: PcapRecords,
    paced: bool,
    /// A frame read from the file but not yet due (paced mode): its file timestamp and bytes.
    held: Option<Nanos>,
    held_data: Vec<u8>,
    first_file_ts: Option<Nanos>,
    start: Option<Nanos>,
    done: bool,
}

/// The capture side. The file header is written by pcap-file; packet records (16 bytes of
/// big-endian header, matching that file header, then the frame) are written here directly
/// because pcap-file's writer gives no way to flush its inner writer between packets.
struct Capture {
    path: String,
    writer: BufWriter<BoxedWrite>,
}

impl Capture {
    fn write_record(&mut self, ts: Nanos, data: &[u8]) -> std::io::Result<()> {
        let secs = u32::try_from(ts.as_nanos() / 1_000_000_000).unwrap_or(u32::MAX);
        let nanos = (ts.as_nanos() % 1_000_000_000) as u32;
        let len = data.len() as u32;
        let mut hdr = [0u8; 16];
        hdr[0..4].copy_from_slice(&secs.to_be_bytes());
        hdr[4..8].copy_from_slice(&nanos.to_be_bytes());
        hdr[8..12].copy_from_slice(&len.to_be_bytes());
        hdr[12..16].copy_from_slice(&len.to_be_bytes());
        self.writer.write_all(&hdr)?;
        self.writer.write_all(data)
    }
}

/// A port backed by pcap files.
pub struct PcapPort {
    name: String,
    replay: Option<Replay>,
    capture: Option<Capture>,
    stats: StatsHandle,
}

impl std::fmt::Debug for PcapPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapPort")
            .field("name", &self.name)
            .field("replay", &self.replay.as_ref().map(|r| &r.path))
            .field("capture", &self.capture.as_ref().map(|c| &c.path))
            .finish()
    }
}

fn pcap_err(port: &str, path: &str, message: impl std::fmt::Display) -> PortError {
    PortError::Pcap {
        port: port.to_string(),
        path: path.to_string(),
        message: message.to_string(),
    }
}

impl PcapPort {
    /// Opens files: `input` is replayed on receive, `output` is created (truncated) and
    /// written on send. At least one should be given; with neither, the port receives
    /// nothing and drops everything sent as `LinkDown`.
    pub fn open(
        name: &str,
        input: Option<&Path>,
        output: Option<&Path>,
        paced: bool,
    ) -> Result<PcapPort, PortError> {
        let mut port = PcapPort {
            name: name.to_string(),
            replay: None,
            capture: None,
            stats: StatsHandle::new(),
        };
        if let Some(p) = input {
            let shown = p.display().to_string();
            let f = File::open(p).map_err(|e| pcap_err(name, &shown, e))?;
            port.set_input(&shown, Box::new(BufReader::new(f)), paced)?;
        }
        if let Some(p) = output {
            let shown = p.display().to_string();
            let f = File::create(p).map_err(|e| pcap_err(name, &shown, e))?;
            port.set_output(&shown, Box::new(f))?;
        }
        Ok(port)
    }

    /// A port over in-memory readers/writers (tests, fuzzing). `label` names them in errors.
    pub fn from_io(
        name: &str,
        input: Option<(&str, BoxedRead)>,
        output: Option<(&str, BoxedWrite)>,
        paced: bool,
    ) -> Result<PcapPort, PortError> {
        let mut port = PcapPort {
            name: name.to_string(),
            replay: None,
            capture: None,
            stats: StatsHandle::new(),
        };
        if let Some((label, r)) = input {
            port.set_input(label, r, paced)?;
        }
        if let Some((label, w)) = output {
            port.set_output(label, w)?;
        }
        Ok(port)
    }

    fn set_input(&mut self, path: &str, r: BoxedRead, paced: bool) -> Result<(), PortError> {
        let reader = PcapRecords::new(r).map_err(|e| pcap_err(&self.name, path, e))?;
        if reader.linktype != 1 {
            return Err(pcap_err(
                &self.name,
                path,
                format!(
                    "link type {:?} is not Ethernet",
                    DataLink::from(reader.linktype)
                ),
            ));
        }
        self.replay = Some(Replay {
            path: path.to_string(),
            reader,
            paced,
            held: None,
            held_data: Vec::new(),
            first_file_ts: None,
            start: None,
            done: false,
        });
        Ok(())
    }

    fn set_output(&mut self, path: &str, w: BoxedWrite) -> Result<(), PortError> {
        let header = PcapHeader {
            snaplen: SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: pcap_file::Endianness::Big,
            ..PcapHeader::default()
        };
        let mut writer = BufWriter::new(w);
        header
            .write_to(&mut writer)
            .map_err(|e| pcap_err(&self.name, path, e))?;
        self.capture = Some(Capture {
            path: path.to_string(),
            writer,
        });
        Ok(())
    }

    /// Whether the replay file has been read to its end (true when there is no input).
    pub fn is_exhausted(&self) -> bool {
        self.replay
            .as_ref()
            .is_none_or(|r| r.done && r.held.is_none())
    }

    /// Flushes the output and returns the writer (tests read back what was written).
    pub fn into_output(self) -> Result<Option<BoxedWrite>, PortError> {
        let name = self.name;
        match self.capture {
            None => Ok(None),
            Some(c) => {
                let path = c.path;
                c.writer
                    .into_inner()
                    .map(Some)
                    .map_err(|e| pcap_err(&name, &path, e.error()))
            }
        }
    }
}

impl Replay {
    /// When the held frame is due (paced mode maps file time onto the caller's clock).
    fn due(&self, file_ts: Nanos) -> Nanos {
        match (self.paced, self.start, self.first_file_ts) {
            (true, Some(start), Some(first)) => start + (file_ts - first),
            _ => file_ts,
        }
    }
}

impl Port for PcapPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        let Some(r) = self.replay.as_mut() else {
            return Ok(0);
        };
        let counters = self.stats.counters();
        let mut n = 0;
        while !batch.is_full() {
            if let Some(file_ts) = r.held {
                let due = r.due(file_ts);
                if r.paced && due > now {
                    break;
                }
                batch.push(&r.held_data, due);
                counters.add_rx(1, r.held_data.len() as u64);
                r.held = None;
                n += 1;
                continue;
            }
            if r.done {
                break;
            }
            let rec = match r.reader.next_record() {
                None => {
                    r.done = true;
                    break;
                }
                Some(Err(e)) => {
                    r.done = true;
                    return Err(pcap_err(&self.name, &r.path, e));
                }
                Some(Ok(p)) => p,
            };
            let file_ts = rec.ts;
            if r.first_file_ts.is_none() {
                r.first_file_ts = Some(file_ts);
                r.start = Some(now);
            }
            if let Err(reason) = rec.check() {
                counters.rx_drop(reason, 1);
                continue;
            }
            let pkt = rec;
            r.held_data.clear();
            r.held_data.extend_from_slice(&pkt.data);
            r.held = Some(file_ts);
        }
        Ok(n)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        let counters = self.stats.counters();
        let Some(c) = self.capture.as_mut() else {
            counters.tx_drop(DropReason::LinkDown, batch.len() as u64);
            batch.clear();
            return Ok(0);
        };
        let mut sent = 0;
        for f in batch.iter() {
            if f.data.len() > SNAPLEN as usize {
                counters.tx_drop(DropReason::TooLong, 1);
                continue;
            }
            if let Err(e) = c.write_record(now, &f.data) {
                batch.clear();
                return Err(pcap_err(&self.name, &c.path, e));
            }
            counters.add_tx(1, f.data.len() as u64);
            sent += 1;
        }
        batch.clear();
        Ok(sent)
    }

    fn flush(&mut self, _now: Nanos) -> Result<usize, PortError> {
        if let Some(c) = self.capture.as_mut() {
            c.writer
                .flush()
                .map_err(|e| pcap_err(&self.name, &c.path, e))?;
        }
        Ok(0)
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        let r = self.replay.as_ref()?;
        match r.held {
            Some(ts) if r.paced => Some(r.due(ts)),
            _ => None,
        }
    }

    fn stats_handle(&self) -> StatsHandle {
        self.stats.clone()
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PortError> {
        // A file is always readable until it is exhausted; paced frames are timed by the
        // caller's clock through `poll_timeout`.
        if self.is_exhausted() {
            std::thread::sleep(timeout);
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A `Write` that appends into shared memory, so tests can read back what was written.
    #[derive(Clone, Default)]
    struct SharedBuf(Arc<Mutex<Vec<u8>>>);

    impl Write for SharedBuf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("test mutex").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn frame(i: u8, len: usize) -> Vec<u8> {
        let mut f = vec![i; len];
        f[12] = 0x08;
        f[13] = 0x00;
        f
    }

    /// Writes frames with the given timestamps through a capture port and returns the bytes.
    fn capture(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let buf = SharedBuf::default();
        let mut port =
            PcapPort::from_io("cap", None, Some(("mem", Box::new(buf.clone()))), false).unwrap();
        let mut b = FrameBatch::new(4);
        for (ts, data) in frames {
            b.push(data, Nanos(*ts));
            port.send_batch(&mut b, Nanos(*ts)).unwrap();
        }
        port.flush(Nanos(0)).unwrap();
        drop(port);
        let out = buf.0.lock().unwrap().clone();
        out
    }

    #[test]
    fn capture_then_replay_round_trips() {
        let frames = vec![
            (1_000_000_007, frame(1, 60)),
            (1_000_000_900, frame(2, 100)),
            (2_500_000_000, frame(3, 1514)),
        ];
        let bytes = capture(&frames);
        assert_eq!(
            &bytes[..4],
            &0xa1b23c4du32.to_be_bytes(),
            "nanosecond magic"
        );
        let mut port = PcapPort::from_io(
            "rep",
            Some(("mem", Box::new(std::io::Cursor::new(bytes)))),
            None,
            false,
        )
        .unwrap();
        let mut b = FrameBatch::new(8);
        assert_eq!(port.recv_batch(&mut b, Nanos(0)).unwrap(), 3);
        for (f, (ts, data)) in b.iter().zip(&frames) {
            assert_eq!(f.ts, Nanos(*ts), "timestamps from the file");
            assert_eq!(&f.data, data);
        }
        assert!(port.is_exhausted());
        assert_eq!(port.stats().rx_packets, 3);
    }

    #[test]
    fn capture_is_deterministic() {
        let frames = vec![(5, frame(7, 64)), (9, frame(8, 64))];
        assert_eq!(capture(&frames), capture(&frames));
    }

    #[test]
    fn paced_replay_follows_the_callers_clock() {
        let frames = vec![
            (100, frame(1, 60)),
            (150, frame(2, 60)),
            (400, frame(3, 60)),
        ];
        let bytes = capture(&frames);
        let mut port = PcapPort::from_io(
            "rep",
            Some(("mem", Box::new(std::io::Cursor::new(bytes)))),
            None,
            true,
        )
        .unwrap();
        let mut b = FrameBatch::new(8);
        // First receive at t=1000 anchors file time 100 to 1000.
        assert_eq!(port.recv_batch(&mut b, Nanos(1000)).unwrap(), 1);
        assert_eq!(b.frames()[0].ts, Nanos(1000));
        assert_eq!(port.poll_timeout(), Some(Nanos(1050)));
        assert_eq!(port.recv_batch(&mut b, Nanos(1049)).unwrap(), 0);
        assert_eq!(port.recv_batch(&mut b, Nanos(1300)).unwrap(), 2);
        assert_eq!(b.frames()[1].ts, Nanos(1050));
        assert_eq!(b.frames()[2].ts, Nanos(1300));
        assert!(port.is_exhausted());
    }

    #[test]
    fn small_batches_do_not_lose_frames() {
        let frames: Vec<_> = (0..5).map(|i| (i as u64, frame(i, 60))).collect();
        let bytes = capture(&frames);
        let mut port = PcapPort::from_io(
            "rep",
            Some(("mem", Box::new(std::io::Cursor::new(bytes)))),
            None,
            false,
        )
        .unwrap();
        let mut b = FrameBatch::new(2);
        let mut got = Vec::new();
        loop {
            let n = port.recv_batch(&mut b, Nanos(0)).unwrap();
            if n == 0 {
                break;
            }
            got.extend(b.iter().map(|f| f.data[0]));
            b.clear();
        }
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn garbage_input_is_an_error_not_a_panic() {
        let r = PcapPort::from_io(
            "bad",
            Some(("junk", Box::new(std::io::Cursor::new(vec![1, 2, 3, 4, 5])))),
            None,
            false,
        );
        assert!(matches!(r, Err(PortError::Pcap { .. })));
        // A valid header followed by a cut-off packet record.
        let mut bytes = capture(&[(1, frame(1, 60))]);
        bytes.truncate(bytes.len() - 10);
        let mut port = PcapPort::from_io(
            "cut",
            Some(("cut", Box::new(std::io::Cursor::new(bytes)))),
            None,
            false,
        )
        .unwrap();
        let mut b = FrameBatch::new(2);
        assert!(port.recv_batch(&mut b, Nanos(0)).is_err());
        assert_eq!(
            port.recv_batch(&mut b, Nanos(0)).unwrap(),
            0,
            "then stays at end"
        );
    }

    #[test]
    fn files_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o.pcap");
        let mut port = PcapPort::open("p", None, Some(&out), false).unwrap();
        let mut b = FrameBatch::new(2);
        b.push(&frame(4, 64), Nanos(0));
        port.send_batch(&mut b, Nanos(42)).unwrap();
        port.flush(Nanos(42)).unwrap();
        drop(port);
        let mut rep = PcapPort::open("r", Some(&out), None, false).unwrap();
        assert_eq!(rep.recv_batch(&mut b, Nanos(0)).unwrap(), 1);
        assert_eq!(b.frames()[0].ts, Nanos(42));
        let missing = PcapPort::open("m", Some(&dir.path().join("nope.pcap")), None, false);
        let msg = missing.unwrap_err().to_string();
        assert!(msg.contains("nope.pcap"), "{msg}");
    }

    /// A little-endian microsecond pcap with snap length `snap`: records (orig_len, bytes).
    fn snap_file(snap: u32, records: &[(u32, Vec<u8>)]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&snap.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        for (i, (orig, data)) in records.iter().enumerate() {
            b.extend_from_slice(&(i as u32).to_le_bytes());
            b.extend_from_slice(&7u32.to_le_bytes());
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(&orig.to_le_bytes());
            b.extend_from_slice(data);
        }
        b
    }

    #[test]
    fn snap_length_captures_are_read_and_truncated_frames_counted_as_such() {
        // tcpdump -s 96: a 1514-byte frame kept as 96 bytes (orig_len over the snap
        // length), a whole 60-byte one, an empty record, another cut one.
        let bytes = snap_file(
            96,
            &[
                (1514, frame(1, 96)),
                (60, frame(2, 60)),
                (0, Vec::new()),
                (200, frame(4, 96)),
                (64, frame(5, 64)),
            ],
        );
        let recs: Vec<Record> = PcapRecords::new(Box::new(std::io::Cursor::new(bytes.clone())))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(
            recs.iter().map(|r| r.number).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(recs[0].check(), Err(DropReason::Truncated));
        assert_eq!(recs[2].check(), Err(DropReason::TooShort));
        assert_eq!(
            recs[1].ts,
            Nanos(1_000_007_000),
            "microseconds become nanoseconds"
        );
        assert!(recs[0].skip_reason().unwrap().contains("96 of 1514"));
        let mut port = PcapPort::from_io(
            "rep",
            Some(("mem", Box::new(std::io::Cursor::new(bytes)))),
            None,
            false,
        )
        .unwrap();
        let mut b = FrameBatch::new(8);
        assert_eq!(port.recv_batch(&mut b, Nanos(0)).unwrap(), 2);
        assert_eq!(b.frames()[0].data[0], 2);
        assert_eq!(b.frames()[1].data[0], 5);
        let st = port.stats();
        assert_eq!(st.rx_packets, 2);
        assert_eq!(st.total_drops(), 3);
        assert_eq!(st.rx_dropped(DropReason::Truncated), 2, "{st:?}");
    }

    #[test]
    fn damaged_records_and_pcapng_are_named_errors() {
        let mut bytes = snap_file(96, &[(60, frame(2, 60))]);
        bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&(MAX_RECORD + 1).to_le_bytes());
        bytes.extend_from_slice(&(MAX_RECORD + 1).to_le_bytes());
        let mut r = PcapRecords::new(Box::new(std::io::Cursor::new(bytes))).unwrap();
        assert!(r.next_record().unwrap().is_ok());
        let e = r.next_record().unwrap().unwrap_err();
        assert!(e.contains("record 2") && e.contains("262144"), "{e}");
        let ng = vec![
            0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let e = PcapRecords::new(Box::new(std::io::Cursor::new(ng)))
            .err()
            .unwrap();
        assert!(e.contains("pcapng") && e.contains("editcap"), "{e}");
    }
}
