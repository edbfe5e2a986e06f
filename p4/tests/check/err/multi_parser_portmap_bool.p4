/* `@default_portmap` takes unit numbers: a boolean is refused. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> mark; }

parser IgA(packet_in pkt, out headers_t hdr, out meta_t m,
           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        m.mark = 0x0a;
        transition accept;
    }
}

parser IgB(packet_in pkt, out headers_t hdr, out meta_t m,
           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        m.mark = 0x0b;
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.h.b = m.mark;
        if (ig_intr_md.ingress_port == 0) {
            ig_tm_md.ucast_egress_port = 1;
        } else {
            ig_tm_md.ucast_egress_port = 8;
        }
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EgA(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        pkt.extract(hdr.h);
        m.mark = 0xe0;
        transition accept;
    }
}

parser EgB(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start {
        pkt.extract(eg);
        pkt.extract(hdr.h);
        m.mark = 0xe1;
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) {
    apply { hdr.h.a = m.mark; }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

@default_portmap({true}, {1})
IngressParsers(IgA(), IgB()) ig_prsrs;

@default_portmap(0, {1, 2})
EgressParsers(EgA(), EgB()) eg_prsrs;

MultiParserPipeline(ig_prsrs, Ing(), ID(), eg_prsrs, Eg(), ED()) pipe;
MultiParserSwitch(pipe) main;
