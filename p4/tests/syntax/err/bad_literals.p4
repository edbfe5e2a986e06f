const bit<8> A = 8w0xZZ;
const bit<8> B = 0b102;
const bit<8> C = 8w1 $ 2;
const string S = "never closed;
