//! The macros a program sees without defining them: those bf-p4c's driver passes to its C
//! preprocessor (`-D__p4c__=1 -D__p4c_major__=… -D__p4c_minor__=… -D__p4c_patchlevel__=…
//! -D__p4c_version__="M.m.p"`, as the SDE's build scripts pass them too), pisa's own
//! `__PISA__`, and the two dynamic ones of the C preprocessor, `__LINE__` and `__FILE__`.
//!
//! The version is the open-source bf-p4c's (open-p4studio, SDE 9.13.4), the compiler whose
//! behaviour pisa models: programs that test `__p4c_major__ < 9` to pick an older extern form
//! take the same branch as there.

/// The bf-p4c version pisa answers to: (major, minor, patch level).
pub const P4C_VERSION: (u32, u32, u32) = (9, 13, 4);

/// The fixed predefined macros, name and body (a `-D` on the command line overrides them).
pub fn fixed() -> Vec<(&'static str, String)> {
    let (major, minor, patch) = P4C_VERSION;
    vec![
        ("__PISA__", "1".to_string()),
        ("__p4c__", "1".to_string()),
        ("__p4c_major__", major.to_string()),
        ("__p4c_minor__", minor.to_string()),
        ("__p4c_patchlevel__", patch.to_string()),
        ("__p4c_version__", format!("\"{major}.{minor}.{patch}\"")),
    ]
}

/// `word` is `__LINE__` or `__FILE__`.
pub fn is_dynamic(word: &str) -> bool {
    matches!(word, "__LINE__" | "__FILE__")
}

/// The expansion of a dynamic macro `word` used on 1-based `line` of the file shown as
/// `file`, or `None` when `word` is not one.
pub fn dynamic(word: &str, file: &str, line: usize) -> Option<String> {
    match word {
        "__LINE__" => Some(line.to_string()),
        "__FILE__" => {
            let escaped: String = file
                .chars()
                .flat_map(|c| match c {
                    '"' | '\\' => vec!['\\', c],
                    c => vec![c],
                })
                .collect();
            Some(format!("\"{escaped}\""))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_macros_agree() {
        let f = fixed();
        let get = |n: &str| f.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone());
        assert_eq!(get("__p4c_major__").as_deref(), Some("9"));
        assert_eq!(get("__p4c_version__").as_deref(), Some("\"9.13.4\""));
        assert_eq!(dynamic("__LINE__", "a.p4", 7).as_deref(), Some("7"));
        assert_eq!(
            dynamic("__FILE__", "d\\x\".p4", 1).as_deref(),
            Some("\"d\\\\x\\\".p4\"")
        );
        assert_eq!(dynamic("__DATE__", "a.p4", 1), None);
    }
}
