/* Long-double arithmetic for INCRBYFLOAT (and later HINCRBYFLOAT). Redis parses with strtold and
 * formats with "%.17Lf" on x87 80-bit long doubles; f64 gives different digits (10.5 + 0.1 would print
 * 10.59999999999999964), so the exact Redis behaviour needs C's long double. This mirrors Redis's
 * string2ld and ld2string(LD_STR_HUMAN). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LONG_DOUBLE_CHARS (5 * 1024)

static int string2ld(const char *s, size_t slen, long double *dp) {
    char buf[MAX_LONG_DOUBLE_CHARS];
    long double value;
    char *eptr;

    if (slen == 0 || slen >= sizeof(buf)) return 0;
    memcpy(buf, s, slen);
    buf[slen] = '\0';
    errno = 0;
    value = strtold(buf, &eptr);
    /* (eptr - buf) != slen: a NUL inside the argument ends strtold's string, not the argument. */
    if (isspace((unsigned char)buf[0]) || eptr[0] != '\0' || (size_t)(eptr - buf) != slen ||
        ((errno == ERANGE) && (value == HUGE_VALL || value == -HUGE_VALL || fpclassify(value) == FP_ZERO)) ||
        errno == EINVAL || isnan(value))
        return 0;
    *dp = value;
    return 1;
}

static long ld2string_human(char *buf, size_t len, long double value) {
    int l;
    if (isinf(value)) {
        if (len < 5) return 0;
        if (value > 0) { memcpy(buf, "inf", 3); l = 3; }
        else { memcpy(buf, "-inf", 4); l = 4; }
        return l;
    }
    l = snprintf(buf, len, "%.17Lf", value);
    if (l < 0 || (size_t)l + 1 > len) return 0;
    if (strchr(buf, '.') != NULL) {
        char *p = buf + l - 1;
        while (*p == '0') { p--; l--; }
        if (*p == '.') l--;
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') { buf[0] = '0'; l = 1; }
    return l;
}

/* Returns the length written to out, or -1 (current value not a float), -2 (increment not a float),
 * -3 (result NaN or infinite), -4 (no room). */
long goblin_incr_long_double(const char *cur, size_t curlen, int has_cur, const char *incr, size_t incrlen,
                             char *out, size_t outlen) {
    long double value = 0, by;
    if (has_cur && !string2ld(cur, curlen, &value)) return -1;
    if (!string2ld(incr, incrlen, &by)) return -2;
    value += by;
    if (isnan(value) || isinf(value)) return -3;
    long l = ld2string_human(out, outlen, value);
    return l == 0 ? -4 : l;
}
