#define BAD_VALUE (1 +)
const bit<8> A = BAD_VALUE;
