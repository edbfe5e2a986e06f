//! control::leo's hot-key agent on leo_kvs.p4 in a switch model: a RoCEv2 PUT to a hot key makes
//! it stale (its GETs go to the server), the server's RoCEv2 reply makes a refresh digest, and
//! the agent re-installs the key at its new location, so the switch answers it again — with the
//! new location. Frames are built here from the program's specified layout.

use std::path::Path;
use std::sync::Arc;

use control::leo::HotKeyAgent;
use pipeline::switch::{InFrame, Switch, SwitchConfig};

const CLIENT: ([u8; 6], [u8; 4]) = ([2, 0, 0, 0, 0, 1], [10, 0, 1, 1]);
const SERVER: ([u8; 6], [u8; 4]) = ([2, 0, 0, 0, 0, 2], [10, 0, 1, 2]);
const KEY: u64 = 0x1111;
const OLD: u64 = 0x7f00_0000_1000;
const NEW: u64 = 0x7f00_0000_2340;

fn switch() -> Switch {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/leo_kvs.p4");
    let prog = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("leo_kvs.p4:\n{}", e.render()))
        .program;
    let mut sw = Switch::new(Arc::new(prog), SwitchConfig::default()).unwrap();
    let tables = format!(
        "tables:
  - table: KvsIngress.hosts
    entries:
      - {{ key: {{ hdr.ipv4.dst_addr: \"10.0.1.1\" }}, action: to_host, params: {{ port: 0 }} }}
      - {{ key: {{ hdr.ipv4.dst_addr: \"10.0.1.2\" }}, action: to_host, params: {{ port: 1 }} }}
  - table: KvsIngress.servers
    entries:
      - {{ key: {{ hdr.ipv4.src_addr: \"10.0.1.2\" }}, action: server }}
  - table: KvsIngress.hot
    entries:
      - {{ key: {{ hdr.kv.key: {KEY} }}, action: hot_key, params: {{ slot: 3, value: {OLD} }} }}
"
    );
    let file = control::tables_file::from_yaml(&tables).unwrap();
    control::tables_file::apply(&mut sw, &file).unwrap();
    sw
}

fn ip_udp(src: ([u8; 6], [u8; 4]), dst: ([u8; 6], [u8; 4]), dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&src.1);
    f.extend_from_slice(&dst.1);
    let ip_len = (20 + 8 + payload.len()) as u16;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&49152u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&(ip_len - 20).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

/// A UDP lookup of `KEY` on the switch path.
fn lookup() -> Vec<u8> {
    let mut p = vec![1, 1, 0, 0];
    p.extend_from_slice(&KEY.to_be_bytes());
    p.extend_from_slice(&0u64.to_be_bytes());
    ip_udp(CLIENT, SERVER, 9191, &p)
}

/// An RC SEND-only carrying LEO's message {PUT type 2, seq, len 16, KEY, word}.
fn roce_put(src: ([u8; 6], [u8; 4]), dst: ([u8; 6], [u8; 4]), word: u64) -> Vec<u8> {
    let mut p = vec![0x04, 0x40, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 5];
    p.extend_from_slice(&[2, 2, 0, 0]);
    p.extend_from_slice(&9u64.to_be_bytes());
    p.extend_from_slice(&16u32.to_be_bytes());
    p.extend_from_slice(&KEY.to_be_bytes());
    p.extend_from_slice(&word.to_be_bytes());
    p.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    ip_udp(src, dst, 4791, &p)
}

fn send(sw: &mut Switch, port: u16, f: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    sw.process(
        InFrame {
            port,
            bytes: f,
            ts: 0,
        },
        &mut |o| out.push((o.port, o.bytes)),
    );
    out
}

/// The location in a lookup the switch answered (`None`: it went to the server).
fn answered(out: &[(u16, Vec<u8>)]) -> Option<u64> {
    let (port, f) = out.first()?;
    (*port == 0).then(|| u64::from_be_bytes(f[54..62].try_into().unwrap()))
}

#[test]
fn put_makes_the_key_stale_and_the_agent_reinstalls_it_at_its_new_location() {
    let mut sw = switch();
    let mut agent = HotKeyAgent::default();
    assert_eq!(answered(&send(&mut sw, 0, &lookup())), Some(OLD));
    let put = roce_put(CLIENT, SERVER, 0x5555);
    assert_eq!(
        send(&mut sw, 0, &put),
        vec![(1, put.clone())],
        "RoCEv2 passes unchanged"
    );
    let out = send(&mut sw, 0, &lookup());
    assert_eq!(
        (out.len(), out[0].0, answered(&out)),
        (1, 1, None),
        "stale: to the server"
    );
    assert_eq!(agent.poll(&mut sw).unwrap(), 0, "nothing settled yet");
    let reply = roce_put(SERVER, CLIENT, NEW);
    assert_eq!(send(&mut sw, 1, &reply), vec![(0, reply.clone())]);
    assert_eq!(agent.poll(&mut sw).unwrap(), 1);
    assert_eq!(agent.refreshed, 1);
    assert_eq!(answered(&send(&mut sw, 0, &lookup())), Some(NEW));
}
