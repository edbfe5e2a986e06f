//! The bench's results: medians over rounds with the ratio to the kernel bridge, as a text
//! table or JSON.

use super::*;
use crate::cmd::bench::median;

/// A pisa row's switch column: backend and I/O mode.
pub(super) fn switch_label(backend: Backend, io: IoArg) -> String {
    let io = match io {
        IoArg::Inline => "inline",
        IoArg::Threads => "threads",
    };
    format!("{}/{io}", backend.name())
}

/// Medians over rounds of one switch and frame size; the ratio is the median of the
/// per-round ratios to the bridge.
#[derive(Debug, Clone)]
pub(super) struct Summary {
    switch: String,
    size: usize,
    offered_mpps: f64,
    at_switch_mpps: f64,
    mpps: f64,
    lat_us: [f64; 4],
    ratio: Option<f64>,
}

pub(super) fn summarise(rows: &[RunRow], switches: &[String], sizes: &[usize]) -> Vec<Summary> {
    let mut out = Vec::new();
    for &size in sizes {
        for sw in switches {
            let mine: Vec<&RunRow> = rows
                .iter()
                .filter(|r| r.switch == *sw && r.size == size)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let m = |get: &dyn Fn(&BenchFigures) -> f64| {
                median(mine.iter().map(|r| get(&r.f)).collect())
            };
            let ratio = if sw == "bridge" {
                None
            } else {
                let per_round: Vec<f64> = mine
                    .iter()
                    .filter_map(|r| {
                        rows.iter()
                            .find(|b| b.switch == "bridge" && b.size == size && b.round == r.round)
                            .filter(|b| b.f.mpps > 0.0)
                            .map(|b| r.f.mpps / b.f.mpps)
                    })
                    .collect();
                (!per_round.is_empty()).then(|| median(per_round))
            };
            out.push(Summary {
                switch: sw.clone(),
                size,
                offered_mpps: m(&|f| f.offered_mpps),
                at_switch_mpps: m(&|f| f.at_switch_mpps),
                mpps: m(&|f| f.mpps),
                lat_us: [0, 1, 2, 3].map(|i| m(&|f| f.lat_us[i])),
                ratio,
            });
        }
    }
    out
}

pub(super) fn print_text(
    args: &BenchForwardArgs,
    rows: &[RunRow],
    summary: &[Summary],
    cores: usize,
) {
    println!(
        "forwarding h1 -> h2 through pisa (l2l3.p4) and the kernel bridge on the same veths: \
         {} round(s) of {} s per switch and size, latency at {} frames/s, {} CPU core(s), \
         busy poll {} us",
        args.rounds.max(1),
        args.seconds,
        args.latency_pps,
        cores,
        args.busy_poll
    );
    println!(
        "per run (offered = frames the generator's socket took, at switch = arrived on the switch-side veth):"
    );
    for r in rows {
        let extra = match r.pisa {
            Some(c) => format!(
                "  pisa rx {} tx {} rx drops {} tx drops {} ingress full {} egress full {}",
                c.rx, c.tx, c.rx_drops, c.tx_drops, c.ingress_full, c.egress_full
            ),
            None => String::new(),
        };
        println!(
            "  round {} {:>5} B {:<15} offered {:.3} at switch {:.3} forwarded {:.3} Mpps, p50 {:.1} us, latency frames {}/{}{}",
            r.round + 1,
            r.size,
            r.switch,
            r.f.offered_mpps,
            r.f.at_switch_mpps,
            r.f.mpps,
            r.f.lat_us[0],
            r.f.lat_samples,
            r.f.lat_sent,
            extra
        );
    }
    println!();
    println!("medians over rounds:");
    println!(
        "{:>6} {:<15} {:>9} {:>10} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "size",
        "switch",
        "offered",
        "at switch",
        "fwd Mpps",
        "p50 us",
        "p90 us",
        "p99 us",
        "p99.9 us",
        "/ bridge"
    );
    for s in summary {
        println!(
            "{:>6} {:<15} {:>9.3} {:>10.3} {:>9.3} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>9}",
            s.size,
            s.switch,
            s.offered_mpps,
            s.at_switch_mpps,
            s.mpps,
            s.lat_us[0],
            s.lat_us[1],
            s.lat_us[2],
            s.lat_us[3],
            s.ratio.map_or("-".to_string(), |r| format!("{r:.3}"))
        );
    }
    // pisa's threads: one per port for I/O plus the pipeline; the generator and sink beside.
    println!("{}", pisa::machine::Machine::now().line(cores.min(4)));
}

pub(super) fn print_json(
    args: &BenchForwardArgs,
    rows: &[RunRow],
    summary: &[Summary],
    cores: usize,
) {
    let fig = |f: &BenchFigures| {
        json!({
            "offered_mpps": f.offered_mpps,
            "at_switch_mpps": f.at_switch_mpps,
            "forwarded_mpps": f.mpps,
            "latency_us": {"p50": f.lat_us[0], "p90": f.lat_us[1], "p99": f.lat_us[2], "p99_9": f.lat_us[3]},
            "latency_frames_sent": f.lat_sent,
            "latency_frames_received": f.lat_samples,
        })
    };
    let runs: Vec<_> = rows
        .iter()
        .map(|r| {
            let mut v = fig(&r.f);
            v["round"] = json!(r.round + 1);
            v["switch"] = json!(r.switch);
            v["size"] = json!(r.size);
            if let Some(c) = r.pisa {
                v["pisa"] = json!({
                    "rx": c.rx, "tx": c.tx, "rx_drops": c.rx_drops, "tx_drops": c.tx_drops,
                    "ingress_full": c.ingress_full, "egress_full": c.egress_full,
                });
            }
            v
        })
        .collect();
    let medians: Vec<_> = summary
        .iter()
        .map(|s| {
            json!({
                "switch": s.switch,
                "size": s.size,
                "offered_mpps": s.offered_mpps,
                "at_switch_mpps": s.at_switch_mpps,
                "forwarded_mpps": s.mpps,
                "latency_us": {"p50": s.lat_us[0], "p90": s.lat_us[1], "p99": s.lat_us[2], "p99_9": s.lat_us[3]},
                "ratio_to_bridge": s.ratio,
            })
        })
        .collect();
    let doc = json!({
        "bench": "forward",
        "rounds": args.rounds.max(1),
        "seconds": args.seconds,
        "latency_pps": args.latency_pps,
        "busy_poll_us": args.busy_poll,
        "cpu_cores": cores,
        "machine": pisa::machine::Machine::now().json(),
        "runs": runs,
        "medians": medians,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string())
    );
}
