// Part of the include-cycle test: includes cycle_b.p4, which includes this file again.
#include "cycle_b.p4"
