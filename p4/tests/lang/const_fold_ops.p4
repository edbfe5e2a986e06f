/* Typed compile-time constants built with `/`, `%`, `|+|`, `|-|` and `?:` (P4_16 "Compile-time
   known values": operators applied to compile-time known values), folded in `const`
   declarations and in a constructor argument (the register's size, SZ / 2 = 512 cells), and
   `%` by a constant that is not a power of two when both operands are constants. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<32> r0;
    bit<32> r1;
    bit<32> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<32> r8;
}
struct headers_t { h_t h; }
struct meta_t {}

const bit<32> SZ = 1024;
const bit<32> K1 = SZ / 2;
const bit<32> K2 = SZ % 3;
const bit<32> K3 = SZ |+| 1;
const bit<8> K4 = 8w1 |-| 8w2;
const bit<8> K5 = (SZ > 1000) ? 8w1 : 8w2;
const bit<8> K6 = 8w200 |+| 8w100;
const int<8> K7 = -8s100 |-| 8s100;

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<32>>(SZ / 2) cells;
    RegisterAction<bit<32>, bit<32>, bit<32>>(cells) bump = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + 1;
            rv = v;
        }
    };
    apply {
        hdr.h.r0 = K1;
        hdr.h.r1 = K2;
        hdr.h.r2 = K3;
        hdr.h.r3 = K4;
        hdr.h.r4 = K5;
        hdr.h.r5 = 8w7 % 8w3;
        hdr.h.r6 = K6;
        hdr.h.r7 = (bit<8>)K7;
        hdr.h.r8 = bump.execute(K1 - 1);
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
