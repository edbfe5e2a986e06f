/* A table's next tables see only the writes of the actions that lead to them. bf-p4c visits
   each next-table sequence with the data flow of those actions alone (ir/mau.cpp,
   Table::visit_match_table), so its data dependencies come from them only.
   - `ecmp` runs when `nexthop` ran its @defaultonly NoAction, which writes nothing: control
     dependency only, same stage as nexthop (0), although nexthop's other action writes the
     port ecmp also writes.
   - `fixup` runs when `nexthop` ran set_port, which writes the port fixup writes: output
     dependency, stage 1.
   - `after_hit` runs on `nexthop2`'s hit: @defaultonly actions cannot lead there, so the
     default-only `mark` (writing meta.b8, which after_hit matches on) adds no dependency:
     stage 0. */
// expect stage Ingress.nexthop 0
// expect stage Ingress.ecmp 0
// expect stage Ingress.fixup 1
// expect stage Ingress.nexthop2 0
// expect stage Ingress.after_hit 0
// expect placed Ingress.fixup: after Ingress.nexthop (output dependency on `ig_tm_md.ucast_egress_port`)
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_port(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    action set_port2(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    action set_port3(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    action mark() { meta.b8 = 1; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    table nexthop {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { set_port; @defaultonly NoAction; }
        const default_action = NoAction;
        size = 1024;
    }
    table ecmp {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_port2; NoAction; }
        size = 1024;
    }
    table fixup {
        key = { hdr.ipv4.protocol : exact; }
        actions = { set_port3; NoAction; }
        size = 256;
    }
    table nexthop2 {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { NoAction; @defaultonly mark; }
        size = 1024;
    }
    table after_hit {
        key = { meta.b8 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    apply {
        switch (nexthop.apply().action_run) {
            NoAction : { ecmp.apply(); }
            set_port : { fixup.apply(); }
        }
        if (nexthop2.apply().hit) {
            after_hit.apply();
        }
    }
}

#include "../check/tail.p4inc"
