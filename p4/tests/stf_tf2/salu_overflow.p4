/* Tofino 2's `overflow` / `underflow` handlers of a RegisterAction (t2na.p4: `@optional
   abstract`, synchronous with enqueue/push and dequeue/pop) and `Register.write` returning the
   value written (tofino2_base.p4 `T write`). The hardware (tofino-model
   MauStatefulCounters::push_fifo/pop_fifo/tick_logging/pop_stack; bf-asm jbay/stateful.cpp
   slog_overflow_instruction / slog_underflow_instruction) runs the handler's instruction in
   apply's place when a push finds the FIFO/stack full or a pop finds it empty; the counter
   does not move, and the cell is the one its value addresses less the wrap bit: the FIFO's
   tail (= head), the stack's cell 0. And `sweep()`: apply on every cell (bf-asm: the counter in
   "clear" mode runs the sweep action's instruction on each cell in turn; pisa all at once).
   Byte `op` picks: 0 push on stack `st`, 1 pop, 2 enqueue on FIFO `q`, 3 dequeue,
   4 `r1 = w.write(a[3:0], a)`, 5 `r1 = w.read(a[3:0])`, 6 `add_all.sweep()` (every cell of
   `sw` += a), 7 `r1 = sw.read(a[1:0])`, 8 `w.write(a[3:0], a + 1)` as a statement. */
#include <core.p4>
#include <t2na.p4>

header d_t {
    bit<8>  op;
    bit<32> a;
    bit<32> r1;
}
struct headers_t { d_t d; }
struct meta_t { }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(4, 0) st;
    RegisterAction<bit<32>, bit<8>, bit<32>>(st) spush = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.d.a;
            rv = hdr.d.a;
        }
        /* full: on cell 0, counts itself there and reports the cell */
        void overflow(inout bit<32> value, out bit<32> rv) {
            rv = value + 32w0xEEEE0000;
            value = value + 1;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(st) spop = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
        /* empty: no value parameter (t2na declares it @optional) */
        void underflow(out bit<32> rv) {
            rv = 32w0xDEAD;
        }
    };
    Register<bit<32>, bit<8>>(4, 0) q;
    RegisterAction<bit<32>, bit<8>, bit<32>>(q) enq = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.d.a;
            rv = hdr.d.a;
        }
        /* full: the tail cell is the head's, the oldest entry */
        void overflow(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<8>, bit<32>>(q) deq = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
        void underflow(inout bit<32> value, out bit<32> rv) {
            rv = value + 32w0xBBBB0000;
        }
    };
    Register<bit<32>, bit<4>>(16, 0) w;
    Register<bit<32>, bit<2>>(4, 0) sw;
    RegisterAction<bit<32>, bit<2>, bit<32>>(sw) add_all = {
        void apply(inout bit<32> value) {
            value = value + hdr.d.a;
        }
    };
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.d.op == 0) {
            hdr.d.r1 = spush.push();
        } else if (hdr.d.op == 1) {
            hdr.d.r1 = spop.pop();
        } else if (hdr.d.op == 2) {
            hdr.d.r1 = enq.enqueue();
        } else if (hdr.d.op == 3) {
            hdr.d.r1 = deq.dequeue();
        } else if (hdr.d.op == 4) {
            hdr.d.r1 = w.write(hdr.d.a[3:0], hdr.d.a);
        } else if (hdr.d.op == 5) {
            hdr.d.r1 = w.read(hdr.d.a[3:0]);
        } else if (hdr.d.op == 6) {
            add_all.sweep();
        } else if (hdr.d.op == 7) {
            hdr.d.r1 = sw.read(hdr.d.a[1:0]);
        } else if (hdr.d.op == 8) {
            w.write(hdr.d.a[3:0], hdr.d.a + 1);
        }
    }
}
control IDp(packet_out pkt, inout headers_t hdr, in meta_t m,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out headers_t hdr, out meta_t m,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EDp(packet_out pkt, inout headers_t hdr, in meta_t m,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), IDp(), EP(), Eg(), EDp()) pipe;
Switch(pipe) main;
