//! Compiles pisa's P4Runtime protocol definitions (control/proto, written from the P4Runtime
//! specification) into Rust with protox (pure Rust, no protoc) and tonic-prost-build, and keeps
//! the descriptor set for the wire-compatibility test.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/p4/v1/p4runtime.proto",
        "proto/p4/config/v1/p4info.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(files, ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("p4runtime_descriptors.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .btree_map(".")
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
