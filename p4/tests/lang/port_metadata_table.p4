/* The port metadata table: port_metadata_table.tables.yaml gives port 0 the 64 bits
   0x0102030405060708, which the ingress parser unpacks into a struct (as the SDE's
   tna_port_metadata_extern does) and the control copies into the packet: byte y gets f1's low
   byte (0x02), byte z gets f4 (0x08). Port 1 has no entry: its metadata is 0. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> y;
    bit<8> z;
}
struct port_md_t {
    bit<16> f1;
    bit<24> f2;
    bit<16> f3;
    bit<8>  f4;
}
struct headers_t { h_t h; }
struct meta_t { port_md_t port_md; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        m.port_md = port_metadata_unpack<port_md_t>(pkt);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.h.y = m.port_md.f1[7:0];
        hdr.h.z = m.port_md.f4;
        ig_tm_md.ucast_egress_port = 2;
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
