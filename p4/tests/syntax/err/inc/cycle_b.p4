// Part of the include-cycle test.
#include "cycle_a.p4"
