// Constant table entries: tuples, masks, ranges, don't-cares, defaults and priorities.
#include <tna.p4>

header h_t { bit<8> a; bit<16> b; bit<32> c; }
struct hdr_t { h_t h; }

control C(inout hdr_t hdr) {
    action set(bit<8> v) { hdr.h.a = v; }
    action nop() { }

    table exact_one {
        key = { hdr.h.a : exact; }
        actions = { set; nop; }
        const entries = {
            1 : set(2);
            8w3 : nop();
        }
    }

    table mixed {
        key = {
            hdr.h.a : ternary;
            hdr.h.b : range;
            hdr.h.c : lpm;
        }
        actions = { set; nop; }
        const default_action = nop;
        const entries = {
            (0x10 &&& 0xF0, 100 .. 200, 0x0A000000 &&& 0xFF000000) : set(1);
            (_, _, default) : nop();
            priority = 10 : (8w1, 16w5 .. 16w6, _) : set(3);
        }
    }

    apply {
        exact_one.apply();
        if (mixed.apply().miss) {
            hdr.h.a = 0;
        }
    }
}
