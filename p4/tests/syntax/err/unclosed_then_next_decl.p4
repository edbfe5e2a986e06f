// A control whose apply block is never closed; the parser resynchronises at the next
// declaration and still finds the error inside it.
control A(inout bit<8> x) {
    apply {
        if (x == 1) {
            x = 2;
        }
}

control B(inout bit<8> y) {
    table t {
        key = { y : exact; }
        size = 16
    }
    apply { t.apply(); }
}

header h_t { bit<8> f;
struct s_t { h_t h; }
