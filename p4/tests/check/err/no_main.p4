/* A program without `main` says how to declare one. */
#include <core.p4>
#include <tna.p4>

header h_t { bit<8> x; }
