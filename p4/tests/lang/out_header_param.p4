/* `out` header parameters start invalid (P4_16 §6.8: an `out` parameter is uninitialized, a
   header's validity with it), also where pisa binds the parameter to its argument's storage
   instead of copying (one apply, or applies with the same arguments): a control (`Fill`,
   applied from two branches with the same arguments), a directly called action (`clear`) and
   a sub-parser (`Skip`) each leave their `out` header invalid unless they make it valid. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t {
    h_t h;
    h_t g;
    h_t k;
}
struct meta_t {}

parser Skip(packet_in pkt, out h_t o) {
    state start { transition accept; }
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    Skip() skip;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.g);
        pkt.extract(hdr.k);
        transition select(hdr.h.a) {
            3: drop_k;
            default: accept;
        }
    }
    state drop_k {
        skip.apply(pkt, hdr.k);
        transition accept;
    }
}

control Fill(out h_t o, in bit<8> sel) {
    apply {
        if (sel == 1) {
            o.setValid();
            o.a = 0x77;
            o.b = 0x66;
        }
    }
}

action clear(out h_t x) {}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Fill() fill;
    apply {
        if (hdr.h.b == 0) {
            fill.apply(hdr.g, hdr.h.a);
        } else {
            fill.apply(hdr.g, hdr.h.a);
            clear(hdr.k);
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
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
