/* A header field wider than 128 bits (`bit<320>`): extracted and emitted, copied whole into
   another header, sliced (at most 128 bits at a time), and hashed as part of its header (its
   bits in order). The control copies b.data into c.data, c.tail takes b.data's low 16 bits,
   b.tail its high 16 bits, and h.entries a CRC8 over the whole of b. */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> a; bit<8> b; bit<8> entries; }
header big_t {
    bit<320> data;
    bit<16> tail;
}
struct headers_t {
    h_t h;
    big_t b;
    big_t c;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.b);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<8>>(HashAlgorithm_t.CRC8) crc;
    apply {
        hdr.c.setValid();
        hdr.c.data = hdr.b.data;
        hdr.c.tail = hdr.b.data[15:0];
        hdr.h.entries = crc.get({hdr.b.data, hdr.b.tail});
        hdr.b.tail = hdr.b.data[319:304];
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
