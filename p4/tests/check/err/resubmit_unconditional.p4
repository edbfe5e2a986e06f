/* A `Resubmit()` instance's `emit()` (no resubmit header) outside any `if`: refused as bf-p4c
 * refuses it (parde/extract_deparser.cpp, ExtractDeparser::postorder: "Unsupported
 * unconditional resubmit.emit"); the `if` names the resubmit table entry. */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> a; bit<8> b; bit<16> f; bit<32> x; }
struct headers_t { h_t h; }
struct dg_t { bit<16> f; bit<8> a; }
struct meta_t { bit<8> m; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t md,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        ig_dprsr_md.resubmit_type = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t md,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Resubmit() resubmit;
    apply {
        resubmit.emit();
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); pkt.extract(hdr.h); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t md,
           in egress_intrinsic_metadata_for_deparser_t d) {

    apply {

        pkt.emit(hdr);
    }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
