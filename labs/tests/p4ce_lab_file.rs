//! The P4CE labs' files: `deploy/labs/p4ce.yaml` (the namespace lab's host file) is a valid
//! lab file with the addressing of the nodes, and agrees with the in-memory lab's topology
//! (`deploy/labs/p4ce-switch.yaml`, `labs::p4ce::topology`): the same hosts on the same
//! switch ports with the same MACs.

use std::path::Path;

#[test]
fn p4ce_lab_file_parses_with_the_lab_addressing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/p4ce.yaml");
    let lab = dataplane::lab::Lab::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let text = format!("{lab:?}");
    for i in 1..=5 {
        assert!(text.contains(&format!("10.0.0.{i}")), "host {i} missing");
    }
    assert!(text.contains("10.0.0.100"), "the switch's P4CE IP");
}

#[test]
fn the_namespace_host_file_and_the_in_memory_topology_agree() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/p4ce.yaml");
    let lab = dataplane::lab::Lab::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let topo =
        labs::p4ce::topology(labs::p4ce::TOPOLOGY_HOSTS, &labs::p4ce::repo_labs_dir()).unwrap();
    assert_eq!(lab.hosts.len(), topo.hosts.len());
    for (h, spec) in topo.hosts.iter().enumerate() {
        let host = lab
            .hosts
            .iter()
            .find(|x| x.name == spec.name)
            .unwrap_or_else(|| panic!("{} is not in p4ce.yaml", spec.name));
        let (_, port) = topo.host_attachment(h).unwrap();
        assert_eq!(host.port, port, "{}", spec.name);
        assert_eq!(
            host.mac.as_deref(),
            Some(labs::topology::mac_text(spec.mac).as_str()),
            "{}",
            spec.name
        );
    }
}
