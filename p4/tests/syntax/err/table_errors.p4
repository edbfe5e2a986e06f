#include <core.p4>
control C(inout bit<8> x) {
    action a() { x = 1; }
    table t {
        key = {
            x exact;
            x : ternary
        }
        actions = { a; NoAction }
        size = 16
    }
    apply { t.apply(); }
}
