// Preprocessor features: local includes with guards, object and function-like macros,
// conditionals with defined() and arithmetic, #undef, #pragma.
#include <core.p4>
#include "inc/common.p4"
#include "inc/common.p4"
#pragma once

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define TABLE_SIZE (1024 * 2)
#define LONG_LIST 1, \
    2, 3

#if defined(WIDTH) && WIDTH == 16 && !defined(NOT_DEFINED)
const word_t WORD = 16w7;
#elif WIDTH > 16
const word_t WORD = 16w8;
#else
#error "unreachable"
#endif

#ifdef NOT_DEFINED
this would not parse;
#endif

#undef TABLE_SIZE
#ifndef TABLE_SIZE
const bit<32> SIZE = MAX(3, 4);
#endif

const tuple<bit<8>, bit<8>, bit<8>> L = { LONG_LIST };
