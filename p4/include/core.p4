/* pisa's P4_16 core library: the declarations every P4_16 program may use.
 * Written for pisa from the P4_16 language specification (section "core library"). */
#ifndef PISA_CORE_P4
#define PISA_CORE_P4
#define _CORE_P4_

/* Errors raised by the parser and by verify(). Architectures add their own. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* The packet being parsed. */
extern packet_in {
    /* Copy a fixed-size header out of the packet and move past it. */
    void extract<T>(out T hdr);
    /* Same for a header with one varbit field whose size is given in bits. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read without moving. */
    T lookahead<T>();
    /* Skip bits. */
    void advance(in bit<32> sizeInBits);
    /* Total packet length in bytes. */
    bit<32> length();
}

/* The packet being built by a deparser. */
extern packet_out {
    /* Append a header (or every valid header inside a struct/stack/union). */
    void emit<T>(in T hdr);
}

/* Reject the packet with `toSignal` unless `check` holds (parsers only). */
extern void verify(in bool check, in error toSignal);

/* Compile-time assertions (p4c's core.p4): a false `check` fails the compilation, with
   `message` when given; the value is `true`. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

/* The action that does nothing. */
@noWarn("unused")
action NoAction() {}

/* How table keys are matched. */
match_kind {
    exact,
    ternary,
    lpm
}

#endif /* PISA_CORE_P4 */
