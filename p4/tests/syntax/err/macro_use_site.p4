#define BAD_VALUE (1 +)
const bit<8> A = BAD_VALUE;
#define STR(a) #b
#define BAD_LIT 8w0xQQ
const bit<8> B = BAD_LIT;
