/* A Register declared at the top level, outside every control: one object per pipeline,
   shared by every RegisterAction that names it (here one counts, the other reads). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
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

Register<bit<8>, bit<8>>(16) hits;

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    RegisterAction<bit<8>, bit<8>, bit<8>>(hits) count = {
        void apply(inout bit<8> v, out bit<8> o) { v = v + 1; o = v; }
    };
    RegisterAction<bit<8>, bit<8>, bit<8>>(hits) read = {
        void apply(inout bit<8> v, out bit<8> o) { o = v; }
    };
    action do_count() { hdr.h.a = count.execute(0); }
    action do_read() { hdr.h.a = read.execute(0); }
    table t {
        key = { hdr.h.b : exact; }
        actions = { do_count; do_read; NoAction; }
        const entries = { 1 : do_count(); 2 : do_read(); }
    }
    apply {
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
