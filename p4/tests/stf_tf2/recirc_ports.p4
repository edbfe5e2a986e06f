/* Tofino 2's recirculation ports: ports 0-7 of each pipe loop back (bf-drivers' port manager,
   `pm_recirc_port_range_get` / `pm_recirc_port_to_dev_port_map`: "TOF2: first 8 ports in every
   pipe support recirculation"; `pipe_mgr_tof2_pgr_recir_get` calls every one of them
   recirculating), where Tofino 1 recirculates through quad 17 (68-71). A packet from port 8
   goes to 6 (d = 0xdd), comes back in on 6 (b = 0x06), goes to 1, comes back in on 1
   (c = 0x01) and leaves on 9. */
#include <core.p4>
#include <t2na.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct hdr_t { h_t h; }
struct md_t { }

parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        if (ig.ingress_port == 6) {
            hdr.h.b = 0x06;
            tm.ucast_egress_port = 1;
        } else if (ig.ingress_port == 1) {
            hdr.h.c = 0x01;
            tm.ucast_egress_port = 9;
        } else {
            hdr.h.d = 0xdd;
            tm.ucast_egress_port = 6;
        }
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) {
    apply { }
}
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
