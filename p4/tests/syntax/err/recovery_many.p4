// One mistake per declaration; every one is reported, and the good declarations between
// them still parse.
const bit<8> A = ;
header good_h { bit<8> f; }
struct s_t { good_h h bit<8> y; }
const bit<8> B = 2;
control C(inout s_t s) {
    apply {
        s.h.f = ;
        s.y == 3;
        if s.y { }
        s.y = 1;
    }
}
