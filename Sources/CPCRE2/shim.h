#ifndef ROOST_CPCRE2_SHIM_H
#define ROOST_CPCRE2_SHIM_H

// PCRE2, the regex library MongoDB uses for `$regex`, in its 8-bit (UTF-8) flavour.
// See https://www.pcre.org/current/doc/html/pcre2api.html
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/// PCRE2_ZERO_TERMINATED is a macro Swift cannot import (~(size_t)0).
static inline size_t roost_pcre2_zero_terminated(void) { return PCRE2_ZERO_TERMINATED; }

#endif
