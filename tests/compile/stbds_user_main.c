/* stbds_user_main.c - a separate user TU that uses stb_ds without compiling its implementation. */
#include "../../gshard.h"
#include "stbds_user.h"
#include "stbds_user_code.h"

int main(void) { return user_sum() == 10 && gs_version()[0] ? 0 : 1; }
