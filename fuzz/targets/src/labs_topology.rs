//! Fuzzes the lab topology reader: arbitrary bytes as a topology file give a topology or an
//! error with a file position, and a topology that loads generates its routes; never a panic.

/// One input.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(t) = labs::Topology::from_yaml(&text, std::path::Path::new("/fuzz/t.yaml")) {
        let _ = labs::routes::generate(&t);
        let _ = labs::netns::lab_of(&t);
    }
}
