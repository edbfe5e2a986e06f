/* Hash widths and @symmetric: the ingress writes three hashes of the packet's `data` header
 * into the `result` header, which the packet carries zeroed. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header data_h {
    bit<32> a;
    bit<32> b;
    bit<16> c;
}

header out_h {
    bit<32> crc16_in_32;   /* Hash<bit<32>>(CRC16) over {a, b} */
    bit<16> symmetric;     /* @symmetric(a, b) Hash<bit<16>>(CRC16) over {a, b, c} */
    bit<64> crc64;         /* Hash<bit<64>>(CRC64) over {a, b} */
}

struct headers_t {
    ethernet_h ethernet;
    data_h     data;
    out_h      result;
}
struct metadata_t { }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        pkt.extract(hdr.result);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<32>>(HashAlgorithm_t.CRC16) wide;
    @symmetric("hdr.data.a", "hdr.data.b")
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sym;
    Hash<bit<64>>(HashAlgorithm_t.CRC64) h64;

    apply {
        hdr.result.crc16_in_32 = wide.get({hdr.data.a, hdr.data.b});
        hdr.result.symmetric = sym.get({hdr.data.a, hdr.data.b, hdr.data.c});
        hdr.result.crc64 = h64.get({hdr.data.a, hdr.data.b});
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
