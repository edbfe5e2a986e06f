/* Alpm and Atcam table layouts: an ALPM table matches by longest prefix and an ATCAM table by
   priority among the entries of its partition, exactly as the tables they lay out; the
   memory the layouts save on Tofino is not modelled. Entries in the STF. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8>  part;
    bit<8>  res;
    bit<32> addr;
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
    Alpm(number_partitions = 1024, subtrees_per_partition = 2) alpm;
    Atcam(number_partitions = 16) atcam;
    action set_out(bit<8> v) { hdr.h.res = v; }
    table routes {
        key = { hdr.h.addr : lpm; }
        actions = { set_out; NoAction; }
        implementation = alpm;
        size = 1024;
    }
    table acl {
        key = {
            hdr.h.part : atcam_partition_index;
            hdr.h.addr : ternary;
        }
        actions = { set_out; NoAction; }
        implementation = atcam;
        size = 1024;
    }
    apply {
        if (hdr.h.part == 0) {
            routes.apply();
        } else {
            acl.apply();
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
