//! Fuzzes pcap replay: arbitrary bytes as a capture file must give frames, counted drops or
//! a typed error, never a panic or a hang.

/// One input.
pub fn run(data: &[u8]) {
    let input: Box<dyn std::io::Read + Send> = Box::new(std::io::Cursor::new(data.to_vec()));
    let Ok(mut port) = dataplane::PcapPort::from_io("fuzz", Some(("fuzz", input)), None, false)
    else {
        return;
    };
    let mut batch = dataplane::FrameBatch::new(16);
    // Each call either appends frames or reaches the end/an error; bound the loop anyway.
    for _ in 0..10_000 {
        batch.clear();
        match dataplane::Port::recv_batch(&mut port, &mut batch, dataplane::Nanos(0)) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}
