/* Tofino 2: a Register of a pair of two 64-bit words (bf-p4c's JBay stateful ALU spec has
   MaxDualSize 128, so each half of a pair may be 64 bits; Tofino 1's pair is at most 64 bits in
   all and is refused). The RegisterAction returns the low 32 bits of lo plus the upper 32 bits
   of hi (read before the update) and adds to both halves, carrying across bit 32. */
#include <core.p4>
#include <t2na.p4>

struct pair64_t {
    bit<64> lo;
    bit<64> hi;
}
header h_t {
    bit<8>  idx;
    bit<32> out_v;
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
    Register<pair64_t, bit<8>>(16, {64w0xffffffff, 64w0x1_fffffffe}) r;
    RegisterAction<pair64_t, bit<8>, bit<32>>(r) ra = {
        void apply(inout pair64_t v, out bit<32> rv) {
            rv = v.lo[31:0] + v.hi[63:32];
            v.lo = v.lo + 1;
            v.hi = v.hi + 2;
        }
    };
    apply {
        ig_tm_md.ucast_egress_port = 1;
        hdr.h.out_v = ra.execute(hdr.h.idx);
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
