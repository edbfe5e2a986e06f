/* `atcam = X` must name an `Atcam` (here an `Alpm`), `alpm = X` an `Alpm`. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Alpm(number_partitions = 2, subtrees_per_partition = 2) al;
    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table routes {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { fwd; NoAction; }
        size = 128;
        atcam = al;
        default_action = NoAction();
    }
    apply { routes.apply(); }
}

#include "../tail.p4inc"
