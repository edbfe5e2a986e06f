#include "include_self.p4"
const bit<8> X = 1;
