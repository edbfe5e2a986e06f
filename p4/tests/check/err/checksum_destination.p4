/* Checksum results written where bf-p4c refuses them: an update() into a local (not a header
   field), into a 32-bit header field and into a 16-bit header field that starts mid-byte; a
   verify() into an 8-bit field (the parser deposits one bit). The header's own checksum field
   and a bool take them. */
#define CUSTOM_PARSER
#include "../head.p4inc"

header odd_h {
    bit<4>  pad;
    bit<16> csum;
    bit<4>  rest;
    bit<32> wide;
}

struct cs_headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
    odd_h      odd;
}

struct cs_meta_t {
    bit<8>  err8;
    bool    err;
}

parser IngressParser(packet_in pkt, out cs_headers_t hdr, out cs_meta_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_csum;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        ipv4_csum.add(hdr.ipv4);
        meta.err = ipv4_csum.verify();
        meta.err8 = (bit<8>)(bit<1>)ipv4_csum.verify();
        transition accept;
    }
}

control Ingress(inout cs_headers_t hdr, inout cs_meta_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

control IngressDeparser(packet_out pkt, inout cs_headers_t hdr, in cs_meta_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() c;
    apply {
        hdr.ipv4.hdr_checksum = c.update({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        bit<16> sum = c.update({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        hdr.odd.wide = (bit<32>)c.update({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        hdr.odd.csum = c.update({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr);
    }
}

parser EgressParser(packet_in pkt, out cs_headers_t hdr, out cs_meta_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Egress(inout cs_headers_t hdr, inout cs_meta_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgressDeparser(packet_out pkt, inout cs_headers_t hdr, in cs_meta_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
