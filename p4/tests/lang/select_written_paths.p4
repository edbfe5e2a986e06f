/* Every way a pass can write `resubmit_type` makes the deparser resubmit (on Tofino any write
   validates the field; select_written.p4 covers the plain assignment). Byte a picks the path:
   3: an action's `out` parameter bound to the field; 4: a copy of the whole deparser-metadata
   struct from a local; 5: a control's `inout` copy-out (the control is applied twice with
   different arguments, so pisa copies through a temporary); 6: a RegisterAction's result;
   7: a table action's `inout` parameter bound to the field; 2: the local copy of 4, which
   does not reach the field, so no resubmit. A resubmitted packet's second pass writes the
   resubmit tag 0x77 into b. `digest_type` is written only by 4 (in the struct it copies);
   elsewhere the struct copy and the copy-out move the field's own unwritten value back
   (bf-p4c elides such a copy), so p4/tests/dprsr_select.rs counts one digest. */
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

control SetType(inout ingress_intrinsic_metadata_for_deparser_t d) {
    apply { d.resubmit_type = 0; }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<8>, bit<1>>(1, 0) zero;
    RegisterAction<bit<8>, bit<1>, bit<8>>(zero) read_zero = {
        void apply(inout bit<8> v, out bit<8> rv) { rv = v; }
    };
    SetType() set_type;
    ingress_intrinsic_metadata_for_deparser_t local_md;

    action set_out(out bit<3> t) { t = 0; }
    action set_inout(inout bit<3> t) { t = 0; }
    table by_table {
        key = { hdr.h.a : exact; }
        actions = { set_inout(ig_dprsr_md.resubmit_type); NoAction; }
        const entries = { 7 : set_inout(ig_dprsr_md.resubmit_type); }
        default_action = NoAction();
    }

    apply {
        if (ig_intr_md.resubmit_flag == 1) {
            hdr.h.b = m.r.tag;
        } else {
            m.r.setValid();
            m.r.tag = 0x77;
            m.r.pad = 0;
            local_md = ig_dprsr_md;
            local_md.resubmit_type = 0;
            if (hdr.h.a == 3) {
                set_out(ig_dprsr_md.resubmit_type);
            } else if (hdr.h.a == 4) {
                local_md.digest_type = 0;
                ig_dprsr_md = local_md;
            } else if (hdr.h.a == 5) {
                set_type.apply(ig_dprsr_md);
            } else if (hdr.h.a == 6) {
                ig_dprsr_md.resubmit_type = (bit<3>)read_zero.execute(0);
            } else if (hdr.h.a == 2) {
                set_type.apply(local_md);
            }
            by_table.apply();
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
