/* Tofino 2's parser counter stack on nested TLVs (GENEVE-like options): after Ethernet, a
 * byte `total` gives the length of an option area; each option is a type byte, a length
 * byte and that many data bytes. The counter counts the area down; each option pushes its
 * own length with update_with_top, so the data bytes the option's loop takes off its own
 * counter come off the stacked area length too; at the option's end a pop brings the area
 * length back. Options land in `opts`, data bytes in `data`: the deparser emits all options,
 * then all data bytes, which shows in the output what was parsed.
 * Built with `--target tofino2`. NO_UPDATE pushes without update_with_top: the area length
 * then counts the option headers only, so the parser reads on past the area. TNA builds it
 * against tna.p4 (Tofino 1); PUSH_ON_TF1 then calls push, which tna.p4 does not declare. BAD_* defines
 * make the misuses the tests expect refused. */
#include <core.p4>
#if defined(TNA)
#include <tna.p4>
#else
#include <t2na.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}
header area_h { bit<8> total; }
header opt_h {
    bit<8> type;
    bit<8> len;
}
header byte_h { bit<8> b; }

struct headers_t {
    ethernet_h ethernet;
    area_h     area;
    opt_h[4]   opts;
    byte_h[8]  data;
}
struct metadata_t { }

#if defined(NO_UPDATE)
#define UPDATE false
#else
#define UPDATE true
#endif

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.area);
#if defined(PUSH_ON_TF1)
        pc.push(hdr.area.total);
#else
        pc.set(hdr.area.total);
#endif
        transition area;
    }
    /* The area's next option, or its end. */
    state area {
        transition select(pc.is_zero()) {
            true: accept;
            false: option;
        }
    }
    state option {
        pkt.extract(hdr.opts.next);
        pc.decrement(2);
        transition push_length;
    }
    state push_length {
#if defined(BAD_FLAG)
        pc.push(hdr.opts.last.len, hdr.opts.last.type == 1);
#elif defined(BAD_ARITY)
        pc.push(hdr.opts.last.len, 255, 0, true);
#else
        pc.push(hdr.opts.last.len, 255, 0, 255, 0, UPDATE);
#endif
        transition option_data;
    }
    state option_data {
        transition select(pc.is_zero()) {
            true: option_end;
            false: data;
        }
    }
    state data {
        pkt.extract(hdr.data.next);
        pc.decrement(1);
        transition select(pc.is_zero()) {
            true: option_end;
            false: data;
        }
    }
    state option_end {
#if defined(BAD_POP)
        pc.pop(1);
#else
        pc.pop();
#endif
        transition select(pc.is_zero()) {
            true: accept;
            false: option;
        }
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 2; }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
