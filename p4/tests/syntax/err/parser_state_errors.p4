#include <core.p4>
header h_t { bit<8> f; }
parser P(packet_in pkt, out h_t h) {
    state start {
        pkt.extract(h);
        transition select(h.f) {
            1 : accept
            2 : reject;
            default accept;
        }
    }
    state next {
        transition accept;
        h.f = 1;
    }
    table t { }
}
