/* stbds_gshard_optout.c - gshard's implementation without stb_ds's (the program compiles stb_ds elsewhere). */
#define GSHARD_NO_STB_DS_IMPLEMENTATION
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
