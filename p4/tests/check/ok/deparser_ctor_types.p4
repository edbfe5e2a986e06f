/* Tofino 1's `Mirror(type)`, `Resubmit(type)` and `Digest(type)` (bf-p4c's tofino1_base.p4
   declares them on both chips): an instance made with a type is the deparser table entry of
   that type, selected by the deparser metadata's mirror_type / resubmit_type / digest_type
   (bf-p4c ExtractDeparser::processMirrorEmit / processResubmitEmit / processDigestPack), so
   its emit needs no `if`: the summary shows each under a test of its field against its type.
   Two digests of types 1 and 2 share the digest_type selector. */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> a; bit<8> b; bit<16> f; bit<32> x; }
header mir_h { bit<8> kind; }
struct headers_t { h_t h; }
struct dg_t { bit<16> f; bit<8> a; }
struct meta_t { bit<8> m; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t md,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        ig_dprsr_md.mirror_type = (bit<3>) hdr.h.a;
        ig_dprsr_md.resubmit_type = (bit<3>) hdr.h.b;
        ig_dprsr_md.digest_type = (bit<3>) hdr.h.f;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t md,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Mirror(1) mirror;
    Resubmit(2) resubmit;
    Digest<dg_t>(1) d1;
    Digest<dg_t>(2) d2;
    apply {
        mirror.emit<mir_h>((MirrorId_t)5, {0xE1});
        resubmit.emit();
        d1.pack({hdr.h.f, hdr.h.a});
        d2.pack({hdr.h.f, hdr.h.b});
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); pkt.extract(hdr.h); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t md,
           in egress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
