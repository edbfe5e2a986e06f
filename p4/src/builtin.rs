//! Our own architecture headers (`core.p4`, `tna.p4`, `t2na.p4` and the files they include),
//! compiled into the binary so `#include <tna.p4>` works without an SDE installation.

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

/// The names of all built-in headers.
pub const NAMES: &[&str] = &[
    "core.p4",
    "tna.p4",
    "t2na.p4",
    "tofino1_specs.p4",
    "tofino2_specs.p4",
    "tofino_base.p4",
    "tofino_arch.p4",
];

/// The text of built-in header `name`, if there is one.
pub fn lookup(name: &str) -> Option<&'static str> {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_files_agree() {
        assert_eq!(NAMES.len(), FILES.len());
        for n in NAMES {
            assert!(lookup(n).is_some(), "{n}");
        }
        assert!(lookup("v1model.p4").is_none());
    }
}
