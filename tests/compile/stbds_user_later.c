/* stbds_user_later.c - gshard's implementation first, then the user defines STB_DS_IMPLEMENTATION and
   includes stb_ds again in the same TU. Without GSHARD_NO_STB_DS_IMPLEMENTATION that is a second copy of
   stb_ds's functions (a redefinition error); with it, it builds. */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#define STB_DS_IMPLEMENTATION
#include "stbds_user.h"
#include "stbds_user_code.h"

int main(void) { return user_sum() == 10 && gs_version()[0] ? 0 : 1; }
