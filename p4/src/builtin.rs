//! Our own architecture headers (`core.p4`, `tna.p4`, `t2na.p4` and the files they include),
//! compiled into the binary so `#include <tna.p4>` works without an SDE installation.
//!
//! Programs written against older or split SDE layouts include `<tofino.p4>`,
//! `<tofino1_arch.p4>` and friends; those names are aliases that pull in the whole TNA (or
//! T2NA) definition, which is guarded, so any combination of them is safe.

/// Every built-in header, by the name used in `#include <...>`.
pub const FILES: &[(&str, &str)] = &[
    ("core.p4", include_str!("../include/core.p4")),
    ("tna.p4", include_str!("../include/tna.p4")),
    ("t2na.p4", include_str!("../include/t2na.p4")),
    (
        "tofino1_specs.p4",
        include_str!("../include/tofino1_specs.p4"),
    ),
    (
        "tofino2_specs.p4",
        include_str!("../include/tofino2_specs.p4"),
    ),
    ("tofino_base.p4", include_str!("../include/tofino_base.p4")),
    ("tofino_arch.p4", include_str!("../include/tofino_arch.p4")),
];

/// Alternative names for the whole architecture, as found in Intel's SDE layouts.
pub const ALIASES: &[(&str, &str)] = &[
    ("tofino.p4", "#include <tna.p4>\n"),
    ("tofino1_base.p4", "#include <tna.p4>\n"),
    ("tofino1_arch.p4", "#include <tna.p4>\n"),
    ("tofino2.p4", "#include <t2na.p4>\n"),
    ("tofino2_base.p4", "#include <t2na.p4>\n"),
    ("tofino2_arch.p4", "#include <t2na.p4>\n"),
];

/// The names of all built-in headers (files, then aliases).
pub fn names() -> Vec<&'static str> {
    FILES.iter().chain(ALIASES).map(|(n, _)| *n).collect()
}

/// The text of built-in header `name`, if there is one.
pub fn lookup(name: &str) -> Option<&'static str> {
    FILES
        .iter()
        .chain(ALIASES)
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves() {
        for n in names() {
            assert!(lookup(n).is_some(), "{n}");
        }
        assert!(lookup("v1model.p4").is_none());
        assert_eq!(names().len(), FILES.len() + ALIASES.len());
    }

    #[test]
    fn aliases_combine_with_the_main_headers() {
        let opts = crate::LoadOptions::default();
        let text = "#include <core.p4>\n#include <tofino.p4>\n#include <tna.p4>\n#include <tofino1_arch.p4>\nconst PortId_t P = 1;\n";
        let (sm, r) = crate::parse_str("a.p4", text, &opts);
        if let Err(d) = r {
            panic!("{}", d.render(&sm));
        }
        let text = "#include <tofino2.p4>\n#include <t2na.p4>\nconst QueueId_t Q = 7w1;\n";
        let tf2 = crate::LoadOptions {
            defines: vec![(crate::TARGET_MACRO.to_string(), "2".to_string())],
            ..Default::default()
        };
        let (sm, r) = crate::parse_str("b.p4", text, &tf2);
        if let Err(d) = r {
            panic!("{}", d.render(&sm));
        }
        let (_, r) = crate::parse_str("c.p4", "#include <tna.p4>\n#include <t2na.p4>\n", &opts);
        let d = r.expect_err("mixing tna and t2na is an error");
        assert!(d
            .iter()
            .any(|x| x.message.contains("cannot both be included")));
    }
}
