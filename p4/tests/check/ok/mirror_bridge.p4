/* Ingress mirroring with a mirror header, bridged metadata, port metadata, resubmit, a learn
 * digest, a nested control with directional parameters, and egress parsing of both kinds. */
#include <core.p4>
#include <tna.p4>

const MirrorType_t MIRROR_TYPE_I2E = 1;
const bit<8> PKT_BRIDGED = 0x01;
const bit<8> PKT_MIRRORED = 0x02;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header bridged_h {
    bit<8>  pkt_type;
    bit<7>  pad;
    PortId_t ingress_port;
}

header mirror_h {
    bit<8>  pkt_type;
    bit<48> ingress_ts;
}

struct port_md_t {
    bit<16> port_class;
    bit<48> unused;
}

struct headers_t {
    bridged_h  bridged;
    ethernet_h ethernet;
}

struct ig_metadata_t {
    port_md_t  port_md;
    MirrorId_t session;
    bit<48>    ts;
    bit<8>     pkt_type;
}

struct eg_metadata_t {
    bridged_h bridged;
    mirror_h  mirror;
}

struct learn_t {
    bit<48>  src_addr;
    PortId_t port;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out ig_metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        meta.port_md = port_metadata_unpack<port_md_t>(pkt);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Classify(in bit<48> src, inout ig_metadata_t meta, out bit<8> kind) {
    action mark(bit<8> k) {
        kind = k;
    }
    table classes {
        key = { src : ternary; }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    apply {
        kind = 0;
        classes.apply();
        if (meta.port_md.port_class == 3) {
            kind = kind | 0x80;
        }
    }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Classify() classify;

    action set_mirror(MirrorId_t session) {
        meta.session = session;
        meta.ts = ig_intr_md.ingress_mac_tstamp;
        meta.pkt_type = PKT_MIRRORED;
        ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
    }

    action learn() {
        ig_dprsr_md.digest_type = 1;
    }

    table mirror_cfg {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_mirror; learn; NoAction; }
        default_action = NoAction;
        size = 256;
    }

    apply {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_BRIDGED;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        classify.apply(hdr.ethernet.src_addr, meta, hdr.bridged.pkt_type);
        mirror_cfg.apply();
        if (ig_intr_md.resubmit_flag == 0 && meta.port_md.port_class == 7) {
            ig_dprsr_md.resubmit_type = 1;
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                        in ingress_intrinsic_metadata_t ig_intr_md) {
    Mirror() mirror;
    Resubmit() resubmit;
    Digest<learn_t>() learn_digest;

    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_I2E) {
            mirror.emit<mirror_h>(meta.session, {meta.pkt_type, meta.ts});
        }
        if (ig_dprsr_md.resubmit_type == 1) {
            resubmit.emit();
        }
        if (ig_dprsr_md.digest_type == 1) {
            learn_digest.pack({hdr.ethernet.src_addr, ig_intr_md.ingress_port});
        }
        pkt.emit(hdr);
    }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out eg_metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            PKT_MIRRORED : parse_mirror;
            default : parse_bridged;
        }
    }
    state parse_mirror {
        pkt.extract(meta.mirror);
        transition accept;
    }
    state parse_bridged {
        pkt.extract(meta.bridged);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (meta.mirror.isValid()) {
            hdr.ethernet.setValid();
            hdr.ethernet.dst_addr = meta.mirror.ingress_ts;
            hdr.ethernet.src_addr = 0;
            hdr.ethernet.ether_type = 0x88b5;
        }
    }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;

Switch(pipe) main;
