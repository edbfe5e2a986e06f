// A Tofino 2 program: T2NA types, the ghost thread, and RegisterAction with `this`-free
// bodies using min/max helpers.
#include <t2na.p4>

struct hdr_t {}
struct md_t { bit<32> qlen; }

parser IgP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); transition accept; }
}

control Ig(inout hdr_t hdr, inout md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<11>>(2048) qlens;
    RegisterAction<bit<32>, bit<11>, bit<32>>(qlens) read_q = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = max(v, 32w0); }
    };
    apply {
        md.qlen = read_q.execute(ig_tm_md.qid ++ 4w0);
        ig_tm_md.qid = 7w3;
        ig_dprsr_md.mirror_type = 4w1;
    }
}

control IgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Eg(inout hdr_t hdr, inout md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgD(packet_out pkt, inout hdr_t hdr, in md_t md,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ghost(in ghost_intrinsic_metadata_t gmd) {
    Register<bit<32>, bit<11>>(2048) qlens;
    RegisterAction<bit<32>, bit<11>, void>(qlens) write_q = {
        void apply(inout bit<32> v) { v = (bit<32>) gmd.qlength; }
    };
    apply { write_q.execute(gmd.qid); }
}

Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD(), Ghost()) pipe;
Switch(pipe) main;
