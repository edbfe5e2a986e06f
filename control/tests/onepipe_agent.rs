//! control::onepipe on onepipe.p4: a link silent past the timeout stops holding the switch's
//! barrier back once the agent removes it; a joining link is admitted once it passes it.

use std::path::Path;
use std::sync::Arc;

use control::onepipe::{LinkAgent, LinkEvent, LinkState, Side};
use pipeline::api::PipeSel;
use pipeline::switch::{InFrame, Switch};

fn switch() -> Switch {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/onepipe.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Switch::new(Arc::new(c.program), Default::default()).expect("switch")
}

/// A 1Pipe beacon (Ethernet, IPv4, UDP to port 20304, the 1Pipe header) with barrier `b`.
fn beacon(b: u32) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 0xfe, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ]);
    f.extend_from_slice(&[0x4f, 0x50, 0x4f, 0x50, 0, 26, 0, 0]);
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&b.to_be_bytes()); // ts
    f.extend_from_slice(&b.to_be_bytes()); // be
    f.extend_from_slice(&b.to_be_bytes()); // commit
    f.extend_from_slice(&[0, 0, 0, 4]); // psn, BEACON
    f
}

fn send(sw: &mut Switch, port: u16, b: u32) {
    let mut out = Vec::new();
    sw.process(
        InFrame {
            port,
            bytes: &beacon(b),
            ts: 0,
        },
        &mut |f| out.push(f),
    );
    assert!(out.is_empty(), "beacons end at the switch");
}

fn out_be(sw: &Switch) -> u32 {
    sw.register_read(PipeSel::All, "SwitchIngress.out_be", 0)
        .unwrap()[0]
        .lo as u32
}

#[test]
fn a_silent_link_leaves_the_minimum_and_a_joining_link_enters_past_it() {
    let mut sw = switch();
    let mut agent = LinkAgent::new(30_000);
    for port in 0..4 {
        agent.add_link(port, Side::Below, false).unwrap();
    }
    agent.install(&mut sw, &[]).unwrap();
    send(&mut sw, 3, 10);
    for (t, b) in [(0u64, 100u32), (10_000, 200), (20_000, 300)] {
        for port in 0..3 {
            send(&mut sw, port, b + u32::from(port));
        }
        assert_eq!(out_be(&sw), 10, "link 3 holds the barrier at 10");
        assert!(agent.poll(&mut sw, t).unwrap().is_empty());
    }
    let ev = agent.poll(&mut sw, 40_000).unwrap();
    assert_eq!(ev, [LinkEvent::Removed { link: 3, port: 3 }]);
    send(&mut sw, 0, 400);
    assert_eq!(out_be(&sw), 301, "min over links 0..2 once link 3 is out");

    // A new link on port 5 joins: its packets see the output but do not lower it.
    let n = agent.add_link(5, Side::Below, true).unwrap();
    agent.install(&mut sw, &[]).unwrap();
    send(&mut sw, 5, 250);
    send(&mut sw, 1, 410);
    assert_eq!(out_be(&sw), 302);
    assert!(
        agent.poll(&mut sw, 41_000).unwrap().is_empty(),
        "250 is behind 302"
    );
    send(&mut sw, 5, 500);
    let ev = agent.poll(&mut sw, 42_000).unwrap();
    assert_eq!(ev, [LinkEvent::Joined { link: n, port: 5 }]);
    assert_eq!(agent.state(n), Some(LinkState::Live));
    send(&mut sw, 2, 420);
    assert_eq!(out_be(&sw), 400, "min(400, 410, 420, 500)");
}

/// Reliable 1Pipe (§5.2): a held agent reports a silent link and keeps its barrier in the
/// minimum until the controller removes it (Resume after the processes' completions).
#[test]
fn a_held_silent_link_stays_in_the_minimum_until_the_controller_removes_it() {
    let mut sw = switch();
    let mut agent = LinkAgent::new(30_000).hold_removals();
    for port in 0..4 {
        agent.add_link(port, Side::Below, false).unwrap();
    }
    agent.install(&mut sw, &[]).unwrap();
    send(&mut sw, 3, 10);
    for port in 0..3 {
        send(&mut sw, port, 100 + u32::from(port));
    }
    assert!(agent.poll(&mut sw, 0).unwrap().is_empty());
    for port in 0..3 {
        send(&mut sw, port, 200 + u32::from(port));
    }
    let ev = agent.poll(&mut sw, 40_000).unwrap();
    assert_eq!(ev, [LinkEvent::Silent { link: 3, port: 3 }]);
    assert_eq!(agent.state(3), Some(LinkState::Silent));
    for port in 0..3 {
        send(&mut sw, port, 300 + u32::from(port));
    }
    assert_eq!(out_be(&sw), 10, "the silent link still holds the barrier");
    assert!(
        agent.poll(&mut sw, 80_000).unwrap().is_empty(),
        "reported once"
    );
    assert_eq!(out_be(&sw), 10);
    let ev = agent.remove(&mut sw, 3).unwrap();
    assert_eq!(ev, Some(LinkEvent::Removed { link: 3, port: 3 }));
    assert_eq!(agent.state(3), Some(LinkState::Dead));
    send(&mut sw, 0, 310);
    assert_eq!(
        out_be(&sw),
        301,
        "min over links 0..2 once the controller removed it"
    );
    assert_eq!(agent.remove(&mut sw, 3).unwrap(), None, "removed once");
}
