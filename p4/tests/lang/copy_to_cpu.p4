/* `copy_to_cpu`: a copy of the packet leaves on the CPU port (in STF, as in `pisa run`, port
   64), besides the unicast to port 1. Byte `mode` is the ingress `drop_ctl`: bit 0 drops the
   unicast, bit 1 the copy. Egress writes the port it runs for into byte `port`. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> mode;
    bit<8> port;
}
struct headers_t { h_t h; }
struct meta_t { }

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
    apply {
        ig_tm_md.ucast_egress_port = 1;
        ig_tm_md.copy_to_cpu = 1;
        ig_dprsr_md.drop_ctl = hdr.h.mode[2:0];
    }
}
control IDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out headers_t hdr, out meta_t m,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { hdr.h.port = (bit<8>)eg_intr_md.egress_port; }
}
control EDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), IDep(), EP(), Eg(), EDep()) pipe;
Switch(pipe) main;
