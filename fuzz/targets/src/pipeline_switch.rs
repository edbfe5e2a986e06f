//! Fuzz target: arbitrary frames through the executor's hand-built L2/L3 test program with
//! unicast, multicast (with pruning), ingress and egress mirroring, resubmit and recirculation
//! all configured. Whatever the bytes, the switch must not panic or loop: a frame becomes
//! output, recirculation bounded by the pass limit, or a counted drop.

#[path = "../../../pipeline/tests/common/mod.rs"]
mod common;

use std::sync::{Mutex, OnceLock};

use pipeline::api::PipeSel;
use pipeline::ir::KeyMatch;
use pipeline::switch::{InFrame, Switch, SwitchConfig};
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

fn build() -> Option<Switch> {
    let (prog, _) = common::l2_program(common::Options::default());
    let cfg = SwitchConfig::new(2)
        .with_cpu_port(64)
        .with_loopback(common::LOOPBACK_PORT);
    let mut sw = Switch::new(prog, cfg).ok()?;
    let dst = |m: u128| [("hdr.ethernet.dst_addr", KeyMatch::Exact(m))];
    sw.table_add(
        PipeSel::All,
        "forward",
        &dst(0xa),
        None,
        "set_port",
        &[("port", 2)],
    )
    .ok()?;
    sw.table_add(
        PipeSel::All,
        "forward",
        &dst(0xc),
        None,
        "set_port",
        &[("port", common::LOOPBACK_PORT as u128)],
    )
    .ok()?;
    sw.table_add(
        PipeSel::All,
        "forward",
        &dst(0xd),
        None,
        "set_port",
        &[("port", common::E2E_MIRROR_PORT as u128)],
    )
    .ok()?;
    sw.table_add(PipeSel::All, "forward", &dst(0xe), None, "to_cpu", &[])
        .ok()?;
    sw.table_add(
        PipeSel::All,
        "forward",
        &dst(0xb),
        None,
        "set_mcast",
        &[("grp", 1), ("rid", 1), ("l1_xid", 0), ("l2_xid", 1)],
    )
    .ok()?;
    sw.mc_group_create(1).ok()?;
    sw.mc_node_create(1, 1, &[2, 3, common::LOOPBACK_PORT], &[])
        .ok()?;
    sw.mc_group_add_node(1, 1, None).ok()?;
    sw.mc_prune_set(1, &[3]).ok()?;
    for (id, port) in [(3u16, 8u16), (7, 10)] {
        sw.mirror_session_set(
            id,
            MirrorSession {
                direction: MirrorDirection::Both,
                dest: MirrorDest::Port(port),
                max_len: Some(40),
                enabled: true,
            },
        )
        .ok()?;
    }
    sw.table_add(
        PipeSel::All,
        "acl",
        &[(
            "hdr.ethernet.ether_type",
            KeyMatch::Ternary {
                value: 0x0800,
                mask: 0xffff,
            },
        )],
        Some(1),
        "mirror",
        &[("session", 3)],
    )
    .ok()?;
    Some(sw)
}

static SWITCH: OnceLock<Mutex<Option<Switch>>> = OnceLock::new();

/// One input.
pub fn run(data: &[u8]) {
    let sw = SWITCH.get_or_init(|| Mutex::new(build()));
    let Ok(mut guard) = sw.lock() else { return };
    let Some(sw) = guard.as_mut() else { return };
    let (port, frame) = match data.split_first() {
        Some((p, rest)) => ((*p as u16) << 1, rest),
        None => (0, data),
    };
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port,
            bytes: frame,
            ts: 0,
        }],
        &mut out,
    );
    for f in out {
        sw.recycle(f.bytes);
    }
    let _ = sw.drain_drops();
    let _ = sw.digest_drain();
}
