/* Annotations produced by a macro: `@` and the name touch in the expansion, so they are one
 * annotation even though every expanded token maps back to the macro's use site. `#nm`
 * stringizes the argument and `##` pastes it into the action name and a slice bound. */
#define NAMED_ROTATE(n, nm) \
    @name(#nm) \
    action rotate_by_##n() { \
        h = h[##n-1:0] ++ h[7:##n]; \
    }
#define ROTATE(n) NAMED_ROTATE(n, .rotate_by_##n)

control C(inout bit<8> h) {
    ROTATE(1)
    ROTATE(2)
    apply {
        rotate_by_1();
        rotate_by_2();
    }
}
