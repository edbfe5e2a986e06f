/* Tofino 2's `this.address()` in a RegisterAction: the stateful ALU's address output (bf-asm
   `address`, salu_output_asrc 7; tofino-model `kOutSAddr` returns the meter address the ALU ran
   at). Its low 17 bits are the cell's bit address in the register's RAM words, 128-bit RAM line
   times 128 plus the cell's bit offset in the line: index × cell width in bits. Byte `op`
   picks the register: 1 a 32-bit one (1024 cells), 2 an 8-bit one (4096 cells) through a
   16-bit output, 3 a pair of 32-bit halves (64-bit cells). Each also counts in its cell, and
   returns the address only while the count is below 2 (its output predicate). */
#include <core.p4>
#include <t2na.p4>

header d_t {
    bit<8>  op;
    bit<16> idx;
    bit<32> out32;
    bit<16> out16;
}
struct pair_t { bit<32> lo; bit<32> hi; }
struct headers_t { d_t d; }
struct meta_t { }

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<16>>(1024, 0) r32;
    RegisterAction<bit<32>, bit<16>, bit<32>>(r32) at32 = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (v < 2) {
                rv = this.address();
            }
            v = v + 1;
        }
    };
    Register<bit<8>, bit<16>>(4096, 0) r8;
    RegisterAction<bit<8>, bit<16>, bit<16>>(r8) at8 = {
        void apply(inout bit<8> v, out bit<16> rv) {
            rv = this.address(0);
            v = v + 1;
        }
    };
    Register<pair_t, bit<16>>(512, {0, 0}) rp;
    RegisterAction<pair_t, bit<16>, bit<32>>(rp) atp = {
        void apply(inout pair_t v, out bit<32> rv) {
            rv = this.address();
            v.lo = v.lo + 1;
        }
    };
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.d.op == 1) {
            hdr.d.out32 = at32.execute(hdr.d.idx);
        } else if (hdr.d.op == 2) {
            hdr.d.out16 = at8.execute(hdr.d.idx);
        } else if (hdr.d.op == 3) {
            hdr.d.out32 = atp.execute(hdr.d.idx);
        }
    }
}
control IDp(packet_out pkt, inout headers_t hdr, in meta_t m,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out headers_t hdr, out meta_t m,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.d);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EDp(packet_out pkt, inout headers_t hdr, in meta_t m,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), Ing(), IDp(), EP(), Eg(), EDp()) pipe;
Switch(pipe) main;
