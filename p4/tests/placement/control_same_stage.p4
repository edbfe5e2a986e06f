/* Control dependence costs no stage. bf-p4c (mau/table_dependency_graph.cpp, the min-stage
   pass of finalize_dependence_graph) adds a stage for match (IXBAR_READ), action (ACTION_READ)
   and output edges only; a table applied under another's hit/miss is predicated by that
   table's next-table result within the stage.
   - t_hit runs on t's hit and reads nothing t writes: same stage as t (0).
   - t_miss runs on t's miss and matches on meta.b8, which t's actions write: match
     dependency, stage 1.
   - t_after is applied after the if and reads nothing anyone writes: stage 0.
   - t2 has a `const default_action = NoAction`: bf-p4c disallows its other actions as the
     default (SetupActionProperties in mau/extract_maupipe.cpp), so only NoAction leads to its
     miss branch; t2_miss matches on meta.a16, which only t2's hit action writes: stage 0. */
// expect stage Ingress.t 0
// expect stage Ingress.t_hit 0
// expect stage Ingress.t_miss 1
// expect stage Ingress.t_after 0
// expect stage Ingress.t2 0
// expect stage Ingress.t2_miss 0
// expect placed Ingress.t_hit: with Ingress.t (control dependency)
// expect placed Ingress.t_miss: after Ingress.t (match dependency on `meta.b8`)
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_port(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    action set_a(bit<16> v) { meta.a16 = v; }
    action set_proto(bit<8> v) { hdr.ipv4.protocol = v; }
    table t2 {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_a; NoAction; }
        const default_action = NoAction;
        size = 1024;
    }
    table t2_miss {
        key = { meta.a16 : exact; }
        actions = { set_proto; NoAction; }
        size = 256;
    }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { set_b; NoAction; }
        size = 1024;
    }
    table t_hit {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { set_port; NoAction; }
        size = 1024;
    }
    table t_miss {
        key = { meta.b8 : exact; }
        actions = { set_ttl; NoAction; }
        size = 256;
    }
    table t_after {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { NoAction; }
        size = 64;
    }
    apply {
        if (t.apply().hit) {
            t_hit.apply();
        } else {
            t_miss.apply();
        }
        t_after.apply();
        if (!t2.apply().hit) {
            t2_miss.apply();
        }
    }
}

#include "../check/tail.p4inc"
