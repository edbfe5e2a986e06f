//! Topology files: the shipped ones load; every kind of mistake is named with its line.

use std::path::Path;

use super::*;

fn load(text: &str) -> Result<Topology, TopologyError> {
    Topology::from_yaml(text, Path::new("/labs/t.yaml"))
}

const HEAD: &str = "name: t\ndefaults: { program: fabric.p4, tables: generated }\nswitches:\n  - { name: s1 }\n  - { name: s2 }\nhosts:\n  - { name: h1, ipv4: 10.0.1.2/24 }\n  - { name: h2, ipv4: 10.0.2.2/24 }\n";

#[test]
fn a_small_file_resolves_with_defaults() {
    let t = load(&format!(
        "{HEAD}links:\n  - {{ a: h1, b: \"s1:0\" }}\n  - {{ a: h2, b: \"s2:1/3\", link: \"rate=1G,tx.loss=0.5\" }}\n  - {{ a: \"s1:1\", b: \"s2:0\", up: false }}\n"
    ))
    .unwrap();
    assert_eq!(t.switches[0].program, Path::new("/labs/fabric.p4"));
    assert_eq!(t.switches[0].tables, TablesSource::Generated);
    assert_eq!(t.hosts[0].gateway, Ipv4Addr::new(10, 0, 1, 1));
    assert_eq!(t.host_attachment(1), Some((1, 131)));
    assert_eq!(t.links[1].config.tx.faults.loss, 0.5);
    assert_eq!(t.links[1].config.rx.faults.loss, 0.0);
    assert!(!t.links[2].up);
    assert_ne!(t.switches[0].mac, t.switches[1].mac);
    assert_eq!(t.find_link("s1:1~s2:0"), Some(2));
    assert_eq!(t.find_link("h2"), Some(1));
}

#[test]
fn mistakes_are_named_with_their_line() {
    let cases = [
        ("  - { a: h1, b: \"s9:0\" }\n", "no switch \"s9\"", 10),
        (
            "  - { a: h1, b: \"s1:0\" }\n  - { a: h2, b: \"s1:0\" }\n",
            "already cabled (the link on line 10)",
            11,
        ),
        (
            "  - { a: h1, b: s1 }\n",
            "name the switch's device port",
            10,
        ),
        ("  - { a: hx, b: \"s1:0\" }\n", "hx: no such host", 10),
        ("  - { a: h1, b: \"s1:600\" }\n", "out of range", 10),
        (
            "  - { a: h1, b: \"s1:0\", link: \"loss=7\" }\n",
            "probability 7",
            10,
        ),
        ("  - { a: h1, b: h1 }\n", "both ends are the same", 10),
        (
            "  - { a: h1, b: \"s1:0\" }\n",
            "host h2: no link cables it",
            8,
        ),
    ];
    for (links, want, line) in cases {
        let e = load(&format!("{HEAD}links:\n{links}")).unwrap_err();
        assert!(e.to_string().contains(want), "{links}: {e}");
        assert_eq!(e.line, line, "{links}: {e}");
        assert!(e.to_string().starts_with("/labs/t.yaml:"), "{e}");
    }
    let e = load("name: t\nswitches:\n  - { name: s1, colour: red }\n").unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");
    assert_eq!(e.line, 3, "{e}");
    let e = load("name: t\nswitches:\n  - { name: s1 }\n").unwrap_err();
    assert!(e.to_string().contains("no program"), "{e}");
    let e = load("name: T\n").unwrap_err();
    assert!(e.to_string().contains("lowercase"), "{e}");
    let e = load(&HEAD.replace("10.0.2.2/24", "10.0.1.2/24")).unwrap_err();
    assert!(e.to_string().contains("h1's too"), "{e}");
}

#[test]
fn shipped_topologies_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs");
    for f in ["fat-tree-k4.yaml", "leaf-spine.yaml", "mcrdma-testbed.yaml"] {
        let t = Topology::load(&dir.join(f)).unwrap();
        assert!(t.hosts.iter().all(|h| h.link != usize::MAX), "{f}");
    }
}

/// A topology past `MAX_LINKS` is refused at the first link too many, with its line (a
/// 60-switch full mesh, 1,770 links, aborted on allocation at ~3.7 GB before).
#[test]
fn link_count_is_bounded() {
    let n = 92; // 92 * 91 / 2 = 4,186 links, past the cap
    let mut y =
        String::from("name: t\ndefaults: { program: fabric.p4, tables: generated }\nswitches:\n");
    for i in 0..n {
        y.push_str(&format!("  - {{ name: s{i} }}\n"));
    }
    y.push_str("links:\n");
    let mut count = 0;
    for i in 0..n {
        for j in i + 1..n {
            count += 1;
            y.push_str(&format!("  - {{ a: \"s{i}:{j}\", b: \"s{j}:{i}\" }}\n"));
        }
    }
    assert!(count > MAX_LINKS);
    let e = load(&y).unwrap_err();
    // Header (3 lines), the switches, `links:`, then the links: the first one too many.
    assert_eq!(e.line as usize, 3 + n + 1 + MAX_LINKS + 1, "{e}");
    assert!(e.message.contains("at most 4096"), "{e}");
}

/// A topology past `MAX_SWITCHES` is refused at the first switch too many (3,000 switches
/// took minutes and gigabytes before).
#[test]
fn switch_count_is_bounded() {
    let mut y =
        String::from("name: t\ndefaults: { program: fabric.p4, tables: generated }\nswitches:\n");
    for i in 0..=MAX_SWITCHES {
        y.push_str(&format!("  - {{ name: s{i} }}\n"));
    }
    let e = load(&y).unwrap_err();
    assert_eq!(e.line as usize, 4 + MAX_SWITCHES, "{e}");
    assert!(e.message.contains("at most 512"), "{e}");
}
