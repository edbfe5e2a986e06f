/* A 9-byte resubmit header on Tofino 1, which carries 8 bytes of resubmit data: refused as bf-p4c
 * does ("digest limited to 64 bits", parde_spec.h bitResubmitSize). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
}
header resub_h {
    bit<8>   tag;
    bit<7>   pad;
    PortId_t port;
    bit<48>  rest;
}
struct headers_t { h_t h; }
struct meta_t { PortId_t port; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        m.port = ig_intr_md.ingress_port;
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (ig_intr_md.resubmit_flag == 0) {
            ig_dprsr_md.resubmit_type = 1;
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Resubmit() resubmit;
    apply {
        if (d.resubmit_type == 1) {
            resubmit.emit<resub_h>({1, 0, m.port, 0});
        }
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
