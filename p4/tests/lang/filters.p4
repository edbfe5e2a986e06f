/* Lpf, Wred and DirectLpf. Specs from filters.tables.yaml: `lpf` samples with a time constant
   of 1 us (its output moves towards the samples), `wred` drops (0xdd) at or above 20 and
   never below 10 (0x11), and `dl`, a rate LPF attached to table `t`, sums its decayed samples
   per entry (a miss leaves the byte alone). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> x;
    bit<8> lpf_out;
    bit<8> wred_out;
    bit<8> dlpf_out;
}
struct headers_t { h_t h; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Lpf<bit<8>, bit<1>>(1) lpf;
    Wred<bit<8>, bit<1>>(1, 0xdd, 0x11) wred;
    DirectLpf<bit<8>>() dl;

    action sum() { hdr.h.dlpf_out = dl.execute(hdr.h.x); }
    table t {
        key = { hdr.h.a : exact; }
        actions = { sum; NoAction; }
        filters = dl;
        size = 4;
        default_action = NoAction();
    }
    apply {
        hdr.h.lpf_out = lpf.execute(hdr.h.x, 0);
        hdr.h.wred_out = wred.execute(hdr.h.x, 0);
        t.apply();
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
