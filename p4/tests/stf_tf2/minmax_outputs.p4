/* Tofino 2's MinMaxAction with `this.address()` and `this.predicate()` beside `min16`
   (t2na.p4 declares both on MinMaxAction): the min/max unit's `apply` sees a 128-bit word of
   8 16-bit cells (cell word × 8 + i in lane i); the address output is the word's bit address
   (word × 128, as `this.address()` of any RegisterAction gives the cell's bit address), the
   predicate is one-hot over the compare results (bit 1 set when cmp0 holds, bit 0 when not).
   op 1 writes cell a[7:0] = a[31:16]; op 2 runs the min/max action on word a[7:0]:
   r1 = min16 over lanes 0, 3 and 7 (mask 0x89), r2 = address, r3 = predicate(lane 0 > 5). */
#include <core.p4>
#include <t2na.p4>

header d_t {
    bit<8>  op;
    bit<32> a;
    bit<32> r1;
    bit<32> r2;
    bit<32> r3;
}
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
    Register<bit<16>, bit<8>>(16, 0) r;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r) wr = {
        void apply(inout bit<16> v) {
            v = hdr.d.a[31:16];
        }
    };
    MinMaxAction<bit<16>, bit<8>, bit<32>>(r) mm = {
        void apply(inout bit<128> value, out bit<32> rv1, out bit<32> rv2, out bit<32> rv3) {
            rv1 = (bit<32>) this.min16(value, 8w0x89);
            rv2 = this.address();
            rv3 = this.predicate(value[15:0] > 16w5);
        }
    };
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.d.op == 1) {
            wr.execute(hdr.d.a[7:0]);
        } else if (hdr.d.op == 2) {
            hdr.d.r1 = mm.execute(hdr.d.a[7:0], hdr.d.r2, hdr.d.r3);
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
