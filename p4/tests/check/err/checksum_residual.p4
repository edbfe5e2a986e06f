/* Residual checksums (subtract_all_and_deposit, and the deprecated get()) written where bf-asm
   refuses them: the parser's checksum unit writes one whole 8- or 16-bit PHV container, so a
   32-bit or a 12-bit field cannot take the residual. 16- and 8-bit fields can. */
#define CUSTOM_PARSER
#include "../head.p4inc"

struct rs_meta_t {
    bit<16> ok16;
    bit<8>  ok8;
    bit<32> wide;
    bit<12> narrow;
    bit<32> got;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out rs_meta_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() a;
    Checksum() b;
    Checksum() c;
    Checksum() d;
    Checksum() e;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        a.subtract({hdr.ethernet.ether_type});
        b.subtract({hdr.ethernet.ether_type});
        c.subtract({hdr.ethernet.ether_type});
        d.subtract({hdr.ethernet.ether_type});
        e.subtract({hdr.ethernet.ether_type});
        a.subtract_all_and_deposit(meta.ok16);
        b.subtract_all_and_deposit(meta.ok8);
        c.subtract_all_and_deposit(meta.wide);
        d.subtract_all_and_deposit(meta.narrow);
        meta.got = (bit<32>)e.get();
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout rs_meta_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in rs_meta_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out rs_meta_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Egress(inout headers_t hdr, inout rs_meta_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in rs_meta_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
