/* The deparser's resubmit and learn requests happen only when the pass wrote
   `resubmit_type` / `digest_type` (on Tofino they start each pass invalid; bf-p4c marks them
   "invalidate from arch"), so 0 is a usable type: a packet with a == 1 writes both as 0 and is
   resubmitted once with tag 0x77, which its second pass copies into b; a packet with a == 2
   writes neither and goes out untouched, although `resubmit_type == 0` and `digest_type == 0`
   hold for it too. p4/tests/dprsr_select.rs counts the digests (one: the first pass of a == 1). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
header resub_h {
    bit<8>  tag;
    bit<56> pad;
}
struct headers_t { h_t h; }
struct meta_t { resub_h r; }
struct learn_t { bit<8> a; }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            0 : first_pass;
            1 : second_pass;
        }
    }
    state first_pass {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_h;
    }
    state second_pass {
        pkt.extract(m.r);
        transition parse_h;
    }
    state parse_h {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (ig_intr_md.resubmit_flag == 1) {
            hdr.h.b = m.r.tag;
        } else if (hdr.h.a == 1) {
            m.r.setValid();
            m.r.tag = 0x77;
            m.r.pad = 0;
            ig_dprsr_md.resubmit_type = 0;
            ig_dprsr_md.digest_type = 0;
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Resubmit() resubmit;
    Digest<learn_t>() learn;
    apply {
        if (d.resubmit_type == 0) {
            resubmit.emit(m.r);
        }
        if (d.digest_type == 0) {
            learn.pack({hdr.h.a});
        }
        pkt.emit(hdr);
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
