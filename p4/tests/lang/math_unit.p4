/* MathUnit inside RegisterActions: x/2 (MathOp_t.MUL with A/B = 1/2), √x (MathOp_t.SQRT) and
   a table written out (invert false, shift 0, scale −3, entry i = 2·i: about 2·x).
   By op: 1 stores half(x), 2 stores root(x), 3 stores the table's value and also adds the old
   cell value (value + unit(x): the unit's output as an ALU operand); `result` gets the stored
   value. Each unit has its register (a stateful ALU has one math unit). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> op;
    bit<8> pad;
    bit<32> x;
    bit<32> result;
}
struct headers_t { h_t h; }
struct meta_t {}

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
    Register<bit<32>, bit<1>>(1) r_half;
    Register<bit<32>, bit<1>>(1) r_root;
    Register<bit<32>, bit<1>>(1) r_table;
    MathUnit<bit<32>>(MathOp_t.MUL, 1, 2) half;
    MathUnit<bit<32>>(MathOp_t.SQRT, 1) root;
    MathUnit<bit<32>>(false, 0, -3,
        {30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0}) twice;
    RegisterAction<bit<32>, bit<1>, bit<32>>(r_half) do_half = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = half.execute(hdr.h.x);
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(r_root) do_root = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = root.execute(hdr.h.x);
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(r_table) do_table = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + twice.execute(hdr.h.x);
            rv = value;
        }
    };
    apply {
        if (hdr.h.op == 1) {
            hdr.h.result = do_half.execute(0);
        } else if (hdr.h.op == 2) {
            hdr.h.result = do_root.execute(0);
        } else if (hdr.h.op == 3) {
            hdr.h.result = do_table.execute(0);
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
