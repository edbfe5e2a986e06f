/* A v1model program (the SDE's p4rt_utests is one): pisa runs TNA only and says so, instead of
   only listing the headers it has. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t {}

parser P(packet_in b, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
