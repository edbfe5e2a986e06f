//! Fuzzes the parsers of user-typed dataplane input: port specs (which must also round-trip
//! through `Display`), link settings and lab YAML files. None may panic or hang.

/// One input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = text.parse::<dataplane::PortSpec>() {
        let again: dataplane::PortSpec = spec
            .to_string()
            .parse()
            .expect("a parsed spec must re-parse from its Display form");
        assert_eq!(again, spec);
    }
    let _ = text.parse::<dataplane::LinkConfig>();
    let _ = dataplane::Lab::from_yaml(text);
}
