// Annotations everywhere they may appear, in all body styles.
#include <tna.p4>

@pa_container_size("ingress", "hdr.h.f", 8)
@pa_container_type ("ingress", "hdr.h.f", "normal")
@pa_no_overlay("ingress", "ig_md.x")
header h_t {
    @flexible bit<8> f;
    @padding bit<8> _pad;
}

@structured[version = 2, name = "s"]
struct hdr_t { h_t h; }

@unstructured(this is not -- an expression list)
struct md_t { @name("xx") bit<8> x; }

control C(inout hdr_t hdr, @optional inout md_t md) {
    @name(".counter") DirectCounter<bit<32>>(CounterType_t.PACKETS) cnt;

    @hidden action a(@name("value") bit<8> v) { hdr.h.f = v; cnt.count(); }

    @pragma stage 3
    @pragma ways 4
    table t {
        key = {
            hdr.h.f : exact @name("f") @hidden;
        }
        actions = { @tableonly a; @defaultonly NoAction; }
        @name("t_size") size = 64;
        counters = cnt;
    }

    apply {
        @atomic {
            t.apply();
        }
        @likely if (hdr.h.isValid()) { hdr.h.f = 1; }
    }
}
