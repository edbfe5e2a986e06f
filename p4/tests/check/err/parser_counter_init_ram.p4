/* A gress parser's counter init RAM has 16 rows, one per distinct (max, rotate, mask, add) of
   a ParserCounter load from a field (loads configured alike share a row), as bf-asm allocates
   it: sixteen distinct loads and a repeat of the first fit; a seventeenth distinct one does
   not. */
#define CUSTOM_PARSER
#include "../head.p4inc"

#define LOAD(n, add, next) state s##n { \
        pc.set(hdr.ethernet.ether_type, 255, 0, 7, add); \
        transition next; \
    }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition s0;
    }
    LOAD(0, 0, s1)   LOAD(1, 1, s2)   LOAD(2, 2, s3)   LOAD(3, 3, s4)
    LOAD(4, 4, s5)   LOAD(5, 5, s6)   LOAD(6, 6, s7)   LOAD(7, 7, s8)
    LOAD(8, 8, s9)   LOAD(9, 9, s10)  LOAD(10, 10, s11) LOAD(11, 11, s12)
    LOAD(12, 12, s13) LOAD(13, 13, s14) LOAD(14, 14, s15) LOAD(15, 15, s16)
    LOAD(16, 0, s17)
    LOAD(17, 17, accept)
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { }
}

#include "../tail.p4inc"
