#include "inc/cycle_a.p4"
