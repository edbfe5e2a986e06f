struct s { bit<8> table; bit<8> ok; }
const bit<8> apply = 1;
