/* A 96-bit `port_metadata_unpack` type on Tofino 1, whose phase-0 word is 8 bytes: refused as
 * bf-p4c refuses it (parde/parde_spec.h bytePhase0Size() = 8 on Tofino; its phase-0 output:
 * "Phase 0 type is %1%b, but its size must be exactly %2%b"). */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> a; bit<8> b; bit<16> f; bit<32> x; }
struct pm_t { bit<32> a; bit<32> b; bit<32> c; }
struct headers_t { h_t h; }
struct meta_t { pm_t pm; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t md,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        md.pm = port_metadata_unpack<pm_t>(pkt);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Ing(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; hdr.h.x = md.pm.c; }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t md,
           in ingress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out meta_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t md,
           in egress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
