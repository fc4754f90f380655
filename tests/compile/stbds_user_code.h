/* stbds_user_code.h - a user function built on stb_ds's short names (arrays only, so any C mode works). */
static int user_sum(void) {
    int *a = NULL, i, s = 0;
    for (i = 1; i <= 4; i++) arrput(a, i);
    for (i = 0; i < (int)arrlen(a); i++) s += a[i];
    arrfree(a);
    return s;
}
