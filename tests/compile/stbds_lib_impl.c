/* stbds_lib_impl.c - gshard's implementation TU provides stb_ds's implementation, and the user's code in the
   same TU uses stb_ds too. Expected: builds and links alone. */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include "stbds_user.h"
#include "stbds_user_code.h"

int main(void) { return user_sum() == 10 && gs_version()[0] ? 0 : 1; }
