/* A deparser `Checksum.update()` written after the `emit` of the header it updates. bf-p4c
   collects every `dst = ck.update(...)` of the deparser and substitutes the checksum for `dst`
   in the emit list (`parde/deparser_checksum_update.cpp`, `CollectUpdateChecksums`,
   `SubstituteUpdateChecksums`), so the order the statements are written in does not matter:
   the wire carries the computed checksum. */
#include <core.p4>
#include <tna.p4>

header eth_h {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header d_h {
    bit<16> a;
    bit<16> b;
    bit<16> sum;
}
struct headers_t {
    eth_h eth;
    d_h d;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5: data;
            default: accept;
        }
    }
    state data { pkt.extract(hdr.d); transition accept; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Checksum() ck;
    apply {
        pkt.emit(hdr);
        hdr.d.sum = ck.update({hdr.d.a, hdr.d.b});
    }
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
