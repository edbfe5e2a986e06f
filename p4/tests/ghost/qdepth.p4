// Tofino 2 ghost thread: the ghost control writes each queue-depth update into a top-level
// Register indexed by qid; the ingress control reads the depth of port 2's queue (qid 2 << 4)
// into the probe header, and egress adds the depth the packet met at enqueue (enq_qdepth),
// so a test can check that what ingress read tracks the queue.
#ifdef USE_TNA
#include <tna.p4>
#else
#include <t2na.p4>
#endif

header ethernet_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header probe_h { bit<32> seen; bit<32> enq; bit<32> ping_pong; }
struct hdr_t { ethernet_h eth; probe_h probe; }
struct md_t {}

// Shared by the ghost control (writes) and the ingress control (reads).
Register<bit<32>, bit<11>>(2048) qdepth;
#ifdef MINMAX_IN_GHOST
Register<bit<16>, bit<8>>(256) depths;
#endif

parser IgP(packet_in pkt, out hdr_t hdr, out md_t md,
           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control Ig(inout hdr_t hdr, inout md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md,
           in ghost_intrinsic_metadata_t gmd) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(qdepth) read_depth = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    apply {
        ig_tm_md.ucast_egress_port = 2;
        hdr.probe.seen = read_depth.execute(11w2 << 4);
        hdr.probe.ping_pong = (bit<32>) gmd.ping_pong;
    }
}

control IgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgP(packet_in pkt, out hdr_t hdr, out md_t md,
           out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control Eg(inout hdr_t hdr, inout md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { hdr.probe.enq = (bit<32>) eg_intr_md.enq_qdepth; }
}

control EgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ghost(in ghost_intrinsic_metadata_t gmd) {
    RegisterAction<bit<32>, bit<11>, void>(qdepth) write_depth = {
        void apply(inout bit<32> v) { v = (bit<32>) gmd.qlength; }
    };
#ifdef COUNT_IN_GHOST
    Counter<bit<32>, bit<1>>(1, CounterType_t.PACKETS) updates;
#endif
#ifdef MINMAX_IN_GHOST
    // bf-p4c refuses the calls (`this.max16` in its apply, `execute`), not the declaration.
    MinMaxAction<bit<16>, bit<5>, bit<16>>(depths) deepest = {
        void apply(inout bit<128> value, out bit<16> rv1, out bit<16> rv2) {
            rv1 = this.max16(value, 8w0xff, rv2);
        }
    };
#endif
#ifdef GHOST_TABLE
    // The same update through a table keyed on the queue (a default action for every qid).
    action record() { write_depth.execute(gmd.qid); }
    table queues {
        key = { gmd.qid : exact; gmd.pipe_id : exact; }
        actions = { record; }
        default_action = record();
        size = 64;
    }
#endif
    apply {
#ifdef COUNT_IN_GHOST
        updates.count(0);
#endif
#ifdef MINMAX_IN_GHOST
        deepest.execute(0);
#endif
#ifdef GHOST_TABLE
        if (gmd.qlength != 0 || gmd.qid != 0) {
            queues.apply();
        } else {
            write_depth.execute(gmd.qid);
        }
#else
        write_depth.execute(gmd.qid);
#endif
    }
}

Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD(), Ghost()) pipe;
Switch(pipe) main;
