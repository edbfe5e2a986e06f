/* Bridged metadata in a header with `@flexible` fields of their own (as the SDE's tna_mirror
   writes it): bf-p4c packs those and pads the header to whole bytes; pisa keeps the order and
   pads at the end. 8 + 3 + 1 + 9 bits cross from ingress to egress, which writes them into the
   packet. Without the padding the header is 21 bits and refused. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}

header bridged_h {
    bit<8>              kind;
    @flexible bit<3>    color;
    @flexible bool      flag;
    @flexible PortId_t  port;
}

struct headers_t {
    bridged_h bridged;
    h_t       h;
}
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
    apply {
        hdr.bridged.setValid();
        hdr.bridged.kind = 0x5a;
        hdr.bridged.color = hdr.h.a[2:0];
        hdr.bridged.flag = hdr.h.a[7:7] == 1;
        hdr.bridged.port = ig_intr_md.ingress_port;
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        pkt.extract(hdr.bridged);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) {
    apply {
        hdr.h.b = (bit<8>)hdr.bridged.color;
        if (hdr.bridged.flag) {
            hdr.h.b = hdr.h.b | 0x80;
        }
        hdr.h.c = hdr.bridged.port[7:0] + hdr.bridged.kind;
        hdr.bridged.setInvalid();
    }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
