//! Table-state files (`pisa run --tables FILE`): YAML that programs tables, registers, mirror
//! sessions, the multicast engine and port queues through the runtime API.
//!
//! [`model`] is the file as data; [`from_yaml`] / [`load`] read it; [`apply`] resolves every
//! name against the program (which also gives key match kinds and widths) and writes it to a
//! switch. Errors name the file position and the entry, and carry the API's own error.

mod apply;
pub mod model;

pub(crate) use apply::set_ttl;
pub use apply::{apply, ApplyError, ApplySummary};
pub use model::*;

use std::path::{Path, PathBuf};

/// Why a table file could not be read or applied.
#[derive(Debug, thiserror::Error)]
pub enum TablesFileError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not valid YAML or not the expected shape; the message names the line and column.
    #[error("{0}")]
    Yaml(String),
    /// An item of the file was refused: where it is, which item, and why. The reason is part
    /// of the message and not also an error source, so a caller that prints the chain
    /// (`{:#}`) does not say it twice ("L1 node 1 already exists: L1 node 1 already exists").
    /// The context and reason are printed [`p4::diag::bounded`]: a megabyte name in the file
    /// is not echoed whole.
    #[error(
        "line {line}, column {column}: {}: {}",
        p4::diag::bounded(context),
        p4::diag::bounded(&error.to_string())
    )]
    Item {
        line: u64,
        column: u64,
        context: String,
        error: Box<ApplyError>,
    },
}

/// Reads a table file from YAML text (errors show the source as `<input>`).
pub fn from_yaml(text: &str) -> Result<TablesFile, TablesFileError> {
    from_yaml_named(text, None)
}

/// Reads a table file from YAML text; errors name the source `name` (a file's path).
pub fn from_yaml_named(text: &str, name: Option<&str>) -> Result<TablesFile, TablesFileError> {
    serde_saphyr::from_str_with_options(text, yaml_options(text.len()))
        .map_err(|e| TablesFileError::Yaml(yaml_message_named(&e, text, name)))
}

/// serde-saphyr's limits, with the node and event counts scaled to the text: its defaults
/// (250,000 nodes, about 19,000 table entries) refused a file filling `switch.p4`'s own
/// tables. Every node takes at least a byte of the text, which is in memory already, so the
/// scaled limits bound nothing more than the text does; aliases stay bounded by the defaults.
fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = budget.max_nodes.max(len);
    budget.max_events = budget.max_events.max(len.saturating_mul(2));
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// A YAML error for the person who wrote the file: serde-saphyr's user-facing message (not
/// its advice to the Rust programmer), and where the line holds a one-line `{ }` or `[ ]`
/// with a bracket, brace or comma in an unquoted word, how to quote it.
pub fn yaml_message(e: &serde_saphyr::Error, text: &str) -> String {
    yaml_message_named(e, text, None)
}

/// [`yaml_message`], the source shown as `name` (a file's path) rather than `<input>`.
pub fn yaml_message_named(e: &serde_saphyr::Error, text: &str, name: Option<&str>) -> String {
    let mut options = serde_saphyr::RenderOptions::new(&serde_saphyr::UserMessageFormatter);
    options.source_name = name;
    let mut m = e.render_with_options(options);
    let line = e
        .location()
        .and_then(|l| text.lines().nth((l.line() as usize).saturating_sub(1)));
    if line.is_some_and(flow_word_with_brackets) {
        m.push_str(
            "\nhelp: inside a one-line `{ }` or `[ ]`, a key or value holding `[`, `]`, `{`, `}` \
             or `,` must be quoted, e.g. \"hdr.vlan[0].isValid()\"",
        );
    }
    m
}

/// Whether `line` opens a flow collection and has an unquoted word with a bracket inside
/// (`hdr.vlan[0]`: a word character right before the `[`).
fn flow_word_with_brackets(line: &str) -> bool {
    let mut quoted = None;
    let mut prev = ' ';
    let mut flow = false;
    for c in line.chars() {
        match (quoted, c) {
            (Some(q), c) if c == q => quoted = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quoted = Some(c),
            (None, '#') if prev == ' ' => break,
            (None, '{') => flow = true,
            (None, '[') if flow && (prev.is_alphanumeric() || prev == '_') => return true,
            _ => {}
        }
        prev = c;
    }
    false
}

/// Reads a table file from disk.
pub fn load(path: &Path) -> Result<TablesFile, TablesFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| TablesFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    from_yaml_named(&text, Some(&path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const L2L3: &str = include_str!("../../../p4/programs/l2l3.tables.yaml");

    /// An unquoted header-stack key in a one-line mapping: the user-facing message, with how
    /// to quote it; the block form of the same entry reads.
    #[test]
    fn flow_keys_with_brackets_say_how_to_quote() {
        let flow = "tables:\n  - table: t\n    entries:\n      - { key: { hdr.vlan[0].isValid(): 0 }, action: a }\n";
        let m = from_yaml(flow).unwrap_err().to_string();
        assert!(!m.contains("Option<"), "{m}");
        assert!(m.contains("must be quoted"), "{m}");
        let quoted = flow.replace("hdr.vlan[0].isValid()", "\"hdr.vlan[0].isValid()\"");
        from_yaml(&quoted).unwrap();
        assert!(!flow_word_with_brackets("  - { ports: [0, 1] }  # a[0]"));
        assert!(!flow_word_with_brackets("  - { key: { \"a[0]\": 1 } }"));
    }

    /// 40,000 entries (about 400,000 YAML nodes, past serde-saphyr's default 250,000): read.
    #[test]
    fn large_files_are_read_whole() {
        let mut y = String::from("tables:\n  - table: t\n    entries:\n");
        for i in 0..40_000 {
            y.push_str(&format!(
                "      - {{ key: {{ hdr.ipv4.dst_addr: {i} }}, action: fwd, params: {{ port: 1 }} }}\n"
            ));
        }
        let f = from_yaml(&y).unwrap();
        assert_eq!(f.tables[0].entries.len(), 40_000);
    }

    /// A YAML error in a file names the file, not `<input>` (issue 13).
    #[test]
    fn yaml_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.tables.yaml");
        std::fs::write(&path, "tables:\n  - table: [x\n").unwrap();
        let m = load(&path).unwrap_err().to_string();
        assert!(m.contains(&format!("{}:2:", path.display())), "{m}");
        assert!(!m.contains("<input>"), "{m}");
    }

    #[test]
    fn reads_the_bundled_l2l3_file() {
        let f = from_yaml(L2L3).unwrap();
        assert_eq!(f.tables.len(), 6);
        let mac = &f.tables[0];
        assert_eq!(mac.table.item, "SwitchIngress.mac_dst");
        let def = mac.default.as_ref().unwrap();
        assert_eq!(def.item.action, "flood");
        assert_eq!(def.item.params["mgid"], Text::from("1"));
        assert_eq!(mac.entries.len(), 4);
        assert_eq!(
            mac.entries[0].item.key["hdr.ethernet.dst_addr"],
            Text::from("02:00:00:00:00:01")
        );
        assert_eq!(mac.entries[0].line, 19);
        let acl = &f.tables[4];
        assert_eq!(acl.entries[0].item.priority, Some(10));
        assert_eq!(
            acl.entries[0].item.key["hdr.l4.dst_port"],
            Text::from("23..23")
        );
        assert_eq!(f.multicast.nodes[0].item.ports, vec![0, 1, 2, 3]);
        assert_eq!(f.multicast.groups[0].item.nodes, vec![1]);
        assert_eq!(f.multicast.prune.len(), 4);
    }

    #[test]
    fn numbers_keep_their_spelling() {
        let f = from_yaml(
            "tables:\n  - table: t\n    entries:\n      - { key: { k: 0x0a }, action: a, params: { p: 17, q: 10.0.0.1 } }\n",
        )
        .unwrap();
        let e = &f.tables[0].entries[0].item;
        assert_eq!(e.key["k"], Text::from("0x0a"));
        assert_eq!(e.params["p"], Text::from("17"));
        assert_eq!(e.params["q"], Text::from("10.0.0.1"));
    }

    #[test]
    fn unquoted_addresses_stay_text() {
        let f = from_yaml(
            "tables:\n  - table: t\n    entries:\n      - { key: { a: 02:00:00:00:00:01, b: 10.0.1.0/24, c: 1..2 }, action: x }\n",
        )
        .unwrap();
        let k = &f.tables[0].entries[0].item.key;
        assert_eq!(k["a"], Text::from("02:00:00:00:00:01"));
        assert_eq!(k["b"], Text::from("10.0.1.0/24"));
        assert_eq!(k["c"], Text::from("1..2"));
    }

    #[test]
    fn other_sections() {
        let f = from_yaml(
            "registers:\n  - { register: r, index: 3, lo: 1, hi: 2, pipe: 0 }\n\
             mirror:\n  - { session: 5, direction: ingress, port: 3, max_len: 128 }\n\
             multicast:\n  lags:\n    - { id: 1, ports: [4, 5] }\n\
             ports:\n  - { port: 1, queue_bytes: 100000 }\n",
        )
        .unwrap();
        assert_eq!(f.registers[0].item.hi, Some(Text::from("2")));
        assert_eq!(f.registers[0].line, 2);
        assert_eq!(f.mirror[0].item.direction, MirrorDirection::Ingress);
        assert_eq!(f.multicast.lags[0].item.ports, vec![4, 5]);
        assert_eq!(f.ports[0].item.queue_bytes, Some(100000));
    }

    #[test]
    fn shape_errors_name_the_position() {
        let e = from_yaml("tables:\n  - table: t\n    entries:\n      - { key: {}, acton: a }\n")
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("acton"), "{msg}");
        assert!(msg.contains('4'), "{msg}");
        assert!(from_yaml("tablez: []\n").is_err());
        assert!(from_yaml("mirror:\n  - { session: 1, direction: sideways }\n").is_err());
        assert!(from_yaml("tables: [").is_err());
    }

    /// Integers past 64 bits (JSON or YAML) keep their exact spelling where the file holds
    /// match and parameter text (`2^64`, a 129-bit parameter, as written); where a scalar could
    /// also be a map (a one-field value set entry) the YAML reader would round one to a float,
    /// so it is refused with its position and how to write it (quoted or hex reads exactly).
    #[test]
    fn integers_past_64_bits_are_read_exactly_or_refused_with_the_position() {
        let json = r#"{"tables": [{"table": "t", "entries": [{"key": {"k": 18446744073709551616},
            "action": "a", "params": {"p": 340282366920938463463374607431768211457}}]}],
            "registers": [{"register": "r", "index": 3, "value": 18446744073709551617}]}"#;
        let f = from_yaml(json).unwrap();
        let e = &f.tables[0].entries[0].item;
        assert_eq!(e.key["k"], Text::from("18446744073709551616"));
        assert_eq!(
            e.params["p"],
            Text::from("340282366920938463463374607431768211457")
        );
        assert_eq!(
            f.registers[0].item.value,
            Some(Text::from("18446744073709551617"))
        );
        let big = "value_sets:\n  - value_set: v\n    entries: [7, 18446744073709551616]\n";
        let m = from_yaml(big).unwrap_err().to_string();
        assert!(m.contains("line 3 column 18"), "{m}");
        assert!(m.contains("quote"), "{m}");
        assert!(!m.contains("18446744073709552000"), "{m}");
        let quoted = big.replace("18446744073709551616", "\"18446744073709551616\"");
        let f = from_yaml(&quoted).unwrap();
        assert_eq!(
            f.value_sets[0].entries[1].item,
            ValueSetItem::One(Text::from("18446744073709551616"))
        );
        let hex = big.replace("18446744073709551616", "0x10000000000000000");
        let f = from_yaml(&hex).unwrap();
        assert_eq!(
            f.value_sets[0].entries[1].item,
            ValueSetItem::One(Text::from("0x10000000000000000"))
        );
    }
}
