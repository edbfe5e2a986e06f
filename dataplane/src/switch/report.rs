//! What the live switch tells its user: Prometheus text for `--metrics` and the end-of-run
//! report (ports, pipe threads, drops, queues, tables, counters) over every switch instance.

use std::fmt::Write as _;
use std::time::Duration;

use crate::runtime::{render_prometheus, RuntimeStats};
use pipeline::api::PipeSel;

use super::{merge_cells, Part, SwitchHandle};

/// Prometheus text: the runtime's port and thread metrics plus the switch's drops and queues
/// (drops summed over pipe threads, each queue from the thread of its port's pipe).
pub fn render_metrics(h: &SwitchHandle) -> String {
    let mut s = render_prometheus(&h.stats());
    let ports = h.devports();
    let sw = h.each(Duration::from_secs(2), move |sw, owns| {
        let st = sw.stats();
        let drops: Vec<u64> = pipeline::switch::DropReason::ALL
            .iter()
            .map(|r| st.dropped(*r))
            .collect();
        let part = Part { sw, owns };
        let queues: Vec<_> = ports
            .iter()
            .filter(|&&d| part.owns(d >> 7))
            .filter_map(|&d| sw.port_queue_stats(d).ok().map(|q| (d, q)))
            .collect();
        (drops, queues)
    });
    if let Ok(parts) = sw {
        let mut drops = vec![0u64; pipeline::switch::DropReason::COUNT];
        let mut queues = Vec::new();
        for (d, q) in parts {
            for (sum, n) in drops.iter_mut().zip(d) {
                *sum += n;
            }
            queues.extend(q);
        }
        queues.sort_by_key(|(d, _)| *d);
        let _ = writeln!(
            s,
            "# HELP pisa_switch_drops_total Packets the switch dropped, by reason.\n# TYPE pisa_switch_drops_total counter"
        );
        for (r, n) in pipeline::switch::DropReason::ALL.iter().zip(drops) {
            let _ = writeln!(s, "pisa_switch_drops_total{{reason=\"{r}\"}} {n}");
        }
        type Get = fn(&pipeline::tm::queue::QueueStats) -> u64;
        let rows: [(&str, &str, &str, Get); 5] = [
            (
                "pisa_queue_enqueued_total",
                "counter",
                "Packets queued",
                |q| q.enqueued,
            ),
            (
                "pisa_queue_dropped_total",
                "counter",
                "Packets tail-dropped",
                |q| q.dropped,
            ),
            (
                "pisa_queue_ecn_marked_total",
                "counter",
                "Packets ECN-marked",
                |q| q.marked,
            ),
            (
                "pisa_queue_max_depth_bytes",
                "gauge",
                "Largest queue depth seen",
                |q| q.max_depth_bytes,
            ),
            (
                "pisa_queue_enqueued_bytes_total",
                "counter",
                "Bytes queued",
                |q| q.enqueued_bytes,
            ),
        ];
        for (name, kind, help, get) in rows {
            let _ = writeln!(s, "# HELP {name} {help}.\n# TYPE {name} {kind}");
            for (d, q) in &queues {
                let _ = writeln!(s, "{name}{{port=\"{d}\"}} {}", get(q));
            }
        }
    }
    s
}

/// The end-of-run report: per port, per pipeline thread, switch drops, queues, tables and
/// counters, over every part (switch instance) with each pipe's state from its owner.
pub fn report(parts: &[Part], st: &RuntimeStats) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "ports:");
    let _ = writeln!(
        s,
        "  {:>4} {:<20} {:>10} {:>12} {:>10} {:>12} {:>8}",
        "port", "name", "rx", "rx_bytes", "tx", "tx_bytes", "drops"
    );
    for p in &st.ports {
        let _ = writeln!(
            s,
            "  {:>4} {:<20} {:>10} {:>12} {:>10} {:>12} {:>8}",
            p.devport,
            p.name,
            p.port.rx_packets,
            p.port.rx_bytes,
            p.port.tx_packets,
            p.port.tx_bytes,
            p.total_drops()
        );
        for r in crate::DropReason::ALL {
            for (dir, n) in [("rx", p.port.rx_dropped(r)), ("tx", p.port.tx_dropped(r))] {
                if n > 0 {
                    let _ = writeln!(s, "       {dir} {}: {n}", r.name());
                }
            }
        }
        for (what, n) in [
            ("rx ingress_channel_full", p.runtime.ingress_full),
            ("tx egress_channel_full", p.runtime.egress_full),
            ("tx fault loss", p.faults_tx.lost),
            ("tx fault link_down", p.faults_tx.down_dropped),
            ("tx fault queue", p.faults_tx.queue_dropped),
            (
                "tx held by the link model at stop",
                p.faults_tx.stop_dropped,
            ),
            ("rx fault loss", p.faults_rx.lost),
            ("rx fault link_down", p.faults_rx.down_dropped),
            ("rx fault queue", p.faults_rx.queue_dropped),
            (
                "rx held by the link model at stop",
                p.faults_rx.stop_dropped,
            ),
            ("io errors", p.runtime.io_errors),
        ] {
            if n > 0 {
                let _ = writeln!(s, "       {what}: {n}");
            }
        }
    }
    let _ = writeln!(
        s,
        "pipeline: {} frame(s) processed, {} sent to device ports with nothing attached",
        st.processed, st.no_port
    );
    for t in &st.threads {
        let who = match t.pipe {
            Some(p) => format!("pipe {p} thread"),
            None => "pipeline thread".to_string(),
        };
        let _ = writeln!(
            s,
            "  {who}: {} frame(s) in {} batch(es), copies from other pipes {}, to other pipes {}, \
             dropped for a full cross-pipe channel {}",
            t.frames, t.batches, t.copies_in, t.copies_out, t.cross_full
        );
    }
    let mut drops = [0u64; pipeline::switch::DropReason::COUNT];
    for part in parts {
        for (sum, n) in drops.iter_mut().zip(part.sw.stats().drops) {
            *sum += n;
        }
    }
    let _ = writeln!(s, "switch drops: {}", drops.iter().sum::<u64>());
    for r in pipeline::switch::DropReason::ALL {
        let n = drops[r as usize];
        if n > 0 {
            let _ = writeln!(s, "  {r}: {n}");
        }
    }
    let _ = writeln!(s, "queues:");
    for p in &st.ports {
        let owner = parts.iter().find(|part| part.owns(p.devport >> 7));
        if let Some(Ok(q)) = owner.map(|o| o.sw.port_queue_stats(p.devport)) {
            let _ = writeln!(
                s,
                "  port {:>3}: enqueued {} dropped {} ecn_marked {} max_depth {} B",
                p.devport, q.enqueued, q.dropped, q.marked, q.max_depth_bytes
            );
        }
    }
    let Some(first) = parts.first() else {
        return s;
    };
    let _ = writeln!(s, "tables:");
    let prog = first.sw.program().clone();
    for pl in &prog.pipelines {
        for t in &pl.tables {
            if let Ok(n) = first.sw.table_len(PipeSel::All, &t.name) {
                let (mut hits, mut misses) = (0, 0);
                for part in parts {
                    let (h, m) = part.table_hit_miss(&t.name).unwrap_or((0, 0));
                    hits += h;
                    misses += m;
                }
                let _ = writeln!(
                    s,
                    "  {}: {n} entr{}, {hits} hits, {misses} misses",
                    t.name,
                    if n == 1 { "y" } else { "ies" }
                );
            }
        }
    }
    let _ = writeln!(s, "counters (non-zero cells):");
    for pl in &prog.pipelines {
        for c in &pl.counters {
            if c.direct_table.is_some() {
                continue;
            }
            for i in 0..c.size {
                let cells = merge_cells(
                    parts
                        .iter()
                        .map(|part| part.counter_read(PipeSel::All, &c.name, i))
                        .collect(),
                    |c| c.pipe,
                );
                if let Ok(cells) = cells {
                    for cell in cells.iter().filter(|c| c.packets > 0 || c.bytes > 0) {
                        let _ = writeln!(
                            s,
                            "  {}[{i}] pipe {}: {} packets, {} bytes",
                            c.name, cell.pipe, cell.packets, cell.bytes
                        );
                    }
                }
            }
        }
    }
    s
}
