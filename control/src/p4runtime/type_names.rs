//! The names P4Info gives the program's types (`type_info`, a digest's `type_spec`), as p4c
//! names them: a type by its declared name, and a generic struct or header's specialisation by
//! the name p4c's front end gives the type it makes for it (`SpecializeGenericTypes`:
//! `SpecSignature::name`, then `MinimalNameGenerator::newName`).
//!
//! - The name: the generic type's name, then for each type argument `_` and the argument as p4c
//!   prints it with `<`, `>` and spaces dropped and `,` and `.` made `_`: `pair_t<bit<8>>` is
//!   `pair_t_bit8`, `kv_t<bit<8>, int<16>>` is `kv_t_bit8_int16`, `w_t<pair_t<bit<8>>>` is
//!   `w_t_pair_tbit8`.
//! - The name generator then drops a trailing `_` and digits (`x_7` is `x`: "probably a
//!   generated suffix") and makes the name unique with `_0`, `_1`, ... against the names
//!   already taken. pisa counts as taken the other names it gives here, not every name the
//!   program declares (a specialisation named like a declared type keeps its name).

use std::collections::{BTreeMap, BTreeSet};

/// Maps types as pisa writes them (`pair_t<bit<8>>`) to their P4Info names.
#[derive(Debug, Default)]
pub struct TypeNames {
    given: BTreeMap<String, String>,
    taken: BTreeSet<String>,
}

impl TypeNames {
    /// The P4Info name of `written` (the same name each time it is asked).
    pub fn name(&mut self, written: &str) -> String {
        if let Some(n) = self.given.get(written) {
            return n.clone();
        }
        let name = match specialised(written) {
            None => written.to_string(),
            Some(base) => self.unique(drop_generated_suffix(&base)),
        };
        self.taken.insert(name.clone());
        self.given.insert(written.to_string(), name.clone());
        name
    }

    /// `base`, or `base_N` with the first N that is free (p4c's `cstring::make_unique`).
    fn unique(&self, base: &str) -> String {
        if !self.taken.contains(base) {
            return base.to_string();
        }
        (0..)
            .map(|n| format!("{base}_{n}"))
            .find(|c| !self.taken.contains(c))
            .unwrap_or_default()
    }
}

/// The specialised name of `written` before the name generator, when it has type arguments.
fn specialised(written: &str) -> Option<String> {
    let open = written.find('<')?;
    let inner = written[open + 1..].strip_suffix('>')?;
    let mut name = written[..open].trim().to_string();
    for arg in top_level_args(inner) {
        name.push('_');
        name.extend(arg.trim().chars().filter_map(|c| match c {
            '<' | '>' | ' ' => None,
            ',' | '.' => Some('_'),
            c => Some(c),
        }));
    }
    Some(name)
}

/// The arguments of a type argument list, split at the commas outside nested `<...>`.
fn top_level_args(inner: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

/// p4c's name generator drops a trailing `_N` (digits after an underscore) from a base name.
fn drop_generated_suffix(name: &str) -> &str {
    let kept = name.trim_end_matches(|c: char| c.is_ascii_digit());
    match kept.strip_suffix('_') {
        Some(head) if !head.is_empty() => head,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_types_keep_their_names() {
        let mut n = TypeNames::default();
        assert_eq!(n.name("learn_t"), "learn_t");
        assert_eq!(n.name("x_7"), "x_7");
    }

    /// By hand from `SpecSignature::name`: the base, then `_` and each argument's text with
    /// `<`, `>`, spaces removed and `,`/`.` as `_`.
    #[test]
    fn specialisations_are_named_as_p4c_names_them() {
        let mut n = TypeNames::default();
        assert_eq!(n.name("pair_t<bit<8>>"), "pair_t_bit8");
        assert_eq!(n.name("kv_t<bit<8>, int<16>>"), "kv_t_bit8_int16");
        assert_eq!(n.name("w_t<pair_t<bit<8>>>"), "w_t_pair_tbit8");
        assert_eq!(n.name("t_t<tuple<bit<8>, bool>>"), "t_t_tuplebit8_bool");
        assert_eq!(n.name("s_t<h_t[2]>"), "s_t_h_t[2]");
        // Asked again: the same name.
        assert_eq!(n.name("pair_t<bit<8>>"), "pair_t_bit8");
    }

    /// `MinimalNameGenerator::newName`: a trailing `_digits` is dropped, and a taken name gets
    /// `_0`, `_1`, ...
    #[test]
    fn the_name_generator_drops_numeric_suffixes_and_makes_names_unique() {
        let mut n = TypeNames::default();
        // `g<s_1>` is `g_s_1`, whose `_1` the generator drops.
        assert_eq!(n.name("g<s_1>"), "g_s");
        // `g<s_2>` would be `g_s` too: taken, so `g_s_0`.
        assert_eq!(n.name("g<s_2>"), "g_s_0");
        assert_eq!(n.name("g<s_3>"), "g_s_1");
        // Digits after a letter are no generated suffix.
        assert_eq!(n.name("p<bit<16>>"), "p_bit16");
    }
}

/// The names in a compiled program's P4Info.
#[cfg(test)]
mod p4info_tests {
    const SRC: &str = r#"
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct hs_t { h_t h; }
struct md_t { }
struct pair_t<T> { T lo; T hi; }
struct learn_t { bit<8> a; }
parser IP(packet_in pkt, out hs_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h); transition accept; }
}
control Ing(inout hs_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
            in ingress_intrinsic_metadata_from_parser_t pr,
            inout ingress_intrinsic_metadata_for_deparser_t dp,
            inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply { dp.digest_type = hdr.h.a[2:0]; tm.ucast_egress_port = 1; }
}
control ID(packet_out pkt, inout hs_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t dp) {
    Digest<pair_t<bit<8>>>() narrow;
    Digest<pair_t<bit<16>>>() wide;
    Digest<learn_t>() plain;
    apply {
        if (dp.digest_type == 1) { narrow.pack({hdr.h.a, hdr.h.b}); }
        if (dp.digest_type == 2) { wide.pack({hdr.h.c, hdr.h.c}); }
        if (dp.digest_type == 3) { plain.pack({hdr.h.a}); }
        pkt.emit(hdr);
    }
}
parser EP(packet_in pkt, out hs_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout hs_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t pr,
           inout egress_intrinsic_metadata_for_deparser_t dp,
           inout egress_intrinsic_metadata_for_output_port_t op) { apply { } }
control ED(packet_out pkt, inout hs_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t dp) {
    apply { }
}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
"#;

    /// Each digest's `type_spec` names its struct type as p4c does, and `type_info` lists the
    /// struct under that name: the specialisations of `pair_t` as `pair_t_bit8` and
    /// `pair_t_bit16`, `learn_t` as itself.
    #[test]
    fn digest_types_are_named_as_p4c_names_them() {
        use crate::p4runtime::proto::p4::config::v1::p4_data_type_spec::TypeSpec as D;
        let opts = p4::compile::CompileOptions::default();
        let info = crate::p4runtime::p4info::compile_source("generic_digest.p4", SRC, &opts)
            .unwrap_or_else(|e| panic!("{e}"))
            .p4info;
        let named: Vec<(String, String)> = info
            .digests
            .iter()
            .map(|d| {
                let ty = match d.type_spec.as_ref().and_then(|t| t.type_spec.as_ref()) {
                    Some(D::Struct(n)) => n.name.clone(),
                    other => panic!("{other:?}"),
                };
                (d.preamble.as_ref().unwrap().name.clone(), ty)
            })
            .collect();
        assert_eq!(
            named,
            [
                ("ID.narrow".to_string(), "pair_t_bit8".to_string()),
                ("ID.wide".to_string(), "pair_t_bit16".to_string()),
                ("ID.plain".to_string(), "learn_t".to_string()),
            ]
        );
        let structs = &info.type_info.as_ref().unwrap().structs;
        let keys: Vec<&str> = structs.keys().map(String::as_str).collect();
        assert_eq!(keys, ["learn_t", "pair_t_bit16", "pair_t_bit8"]);
        let members: Vec<&str> = structs["pair_t_bit16"]
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(members, ["lo", "hi"]);
    }
}
