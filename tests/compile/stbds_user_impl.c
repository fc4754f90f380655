/* stbds_user_impl.c - the user's own impl.c for stb_ds, plus a main that uses it. */
#define STB_DS_IMPLEMENTATION
#include "stbds_user.h"
#include "../../gshard.h"
#include "stbds_user_code.h"

int main(void) { return user_sum() == 10 && gs_version()[0] ? 0 : 1; }
