/* varbit fields used as pisa and P4_16 do not allow: a header with a varbit extracted without
   its length, a fixed header given one, a varbit hashed (its padding would change the hash;
   checksums take one), computed on, and copied into one of another size. */
#define CUSTOM_PARSER
#include "../head.p4inc"

header opt_h { varbit<64> data; }
header wide_opt_h { varbit<128> data; }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    opt_h opt;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet, 32);
        pkt.extract(opt);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    opt_h opt;
    wide_opt_h wide;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) crc;
    apply {
        meta.a16 = crc.get({opt.data});
        meta.a16 = opt.data + 1;
        wide.data = opt.data;
    }
}

#include "../tail.p4inc"
