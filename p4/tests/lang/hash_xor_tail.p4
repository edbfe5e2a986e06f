/* XOR hashes cut the input bit string into W-bit words from its start and zero-pad its tail
   (bf-p4c's XOR hash matrix appends zeros after the message), not its front. Inputs x = 32 b,
   y = 8 b, so {x, y} is 40 bits: XOR16 words x[31:16], x[15:0], y ++ 8w0; XOR32 words x,
   y ++ 24w0; XOR8 of the 12-bit x[31:20] words x[31:24], x[23:20] ++ 4w0. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<32> x;
    bit<8>  y;
    bit<16> x16;
    bit<8>  x8;
    bit<32> x32;
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
    Hash<bit<16>>(HashAlgorithm_t.XOR16) h16;
    Hash<bit<8>>(HashAlgorithm_t.XOR8) h8;
    Hash<bit<32>>(HashAlgorithm_t.XOR32) h32;
    apply {
        ig_tm_md.ucast_egress_port = 1;
        hdr.h.x16 = h16.get({hdr.h.x, hdr.h.y});
        hdr.h.x8 = h8.get({hdr.h.x[31:20]});
        hdr.h.x32 = h32.get({hdr.h.x, hdr.h.y});
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
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EDep(packet_out pkt, inout headers_t hdr, in meta_t m,
             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), IDep(), EP(), Eg(), EDep()) pipe;
Switch(pipe) main;
