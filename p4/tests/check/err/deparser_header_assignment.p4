/* A header field assigned in the deparser from something other than a checksum update (or a
   mirror, resubmit or digest source): bf-p4c refuses it (`parde/extract_deparser.cpp`,
   `ExtractDeparser::preorder(AssignmentStatement)`), since the deparser only emits what the PHV
   holds. The checksum update beside it is allowed. */
#define CUSTOM_DEPARSER
#include "../head.p4inc"
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ck;
    apply {
        hdr.ipv4.hdr_checksum = ck.update({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        hdr.ipv4.ttl = 64;
        pkt.emit(hdr);
    }
}
#include "../tail.p4inc"
