/* stbds_user_first.c - the user compiles stb_ds's implementation earlier in the same TU: gshard sees it and
   includes nothing. Expected: builds and links alone. */
#define STB_DS_IMPLEMENTATION
#include "stbds_user.h"
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include "stbds_user_code.h"

int main(void) { return user_sum() == 10 && gs_version()[0] ? 0 : 1; }
