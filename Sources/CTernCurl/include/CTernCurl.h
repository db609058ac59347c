// Calls to libcurl's variadic functions (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt)
// through pointers Tern looked up at run time with dlsym: Swift cannot call a C variadic function
// through a pointer, and calling one as if it were not variadic is undefined behaviour. No libcurl
// header is needed: the project loads libcurl at run time (see Sources/Tern/Transport/Curl).
#ifndef TERN_CURL_SHIM_H
#define TERN_CURL_SHIM_H

#include <stdint.h>

/// curl_easy_setopt or curl_multi_setopt with a `long` argument.
int tern_curl_setopt_long(void *function, void *handle, int option, long value);
/// curl_easy_setopt or curl_multi_setopt with a pointer argument (strings, lists, callbacks, user data).
int tern_curl_setopt_pointer(void *function, void *handle, int option, const void *value);
/// curl_easy_setopt with a `curl_off_t` argument.
int tern_curl_setopt_offset(void *function, void *handle, int option, int64_t value);
/// curl_easy_getinfo, writing through `out` (a `long *`, `char **` or `curl_off_t *` by `info`'s type).
int tern_curl_getinfo(void *function, void *handle, int info, void *out);

#endif
