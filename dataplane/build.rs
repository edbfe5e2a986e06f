//! Build script: with the `afxdp` feature, compiles the XDP program `xdp/redirect.c` to BPF
//! with clang into `$OUT_DIR/redirect.o`. The default build runs nothing and needs no clang.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=xdp/redirect.c");
    if std::env::var_os("CARGO_FEATURE_AFXDP").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".to_string());
    let mut cmd = Command::new(&clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"]);
    // Debian keeps <asm/types.h> under the multiarch include directory.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let multiarch = PathBuf::from(format!("/usr/include/{arch}-linux-gnu"));
    if multiarch.is_dir() {
        cmd.arg("-I").arg(&multiarch);
    }
    cmd.args(["-c", "xdp/redirect.c", "-o"])
        .arg(out.join("redirect.o"));
    let status = cmd.status().unwrap_or_else(|e| {
        panic!(
            "the afxdp feature needs clang to build xdp/redirect.c ({clang}: {e}); \
             install it with `apt-get install clang` or set CLANG"
        )
    });
    assert!(status.success(), "clang failed to compile xdp/redirect.c");
}
