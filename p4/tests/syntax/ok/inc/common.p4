// Included by preprocessor.p4 through a relative path; guarded.
#ifndef COMMON_P4
#define COMMON_P4
#define WIDTH 16
typedef bit<WIDTH> word_t;
#endif
