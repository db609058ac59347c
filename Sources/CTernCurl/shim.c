#include "CTernCurl.h"

typedef int (*tern_curl_variadic)(void *, int, ...);

int tern_curl_setopt_long(void *function, void *handle, int option, long value) {
    return ((tern_curl_variadic)function)(handle, option, value);
}

int tern_curl_setopt_pointer(void *function, void *handle, int option, const void *value) {
    return ((tern_curl_variadic)function)(handle, option, value);
}

int tern_curl_setopt_offset(void *function, void *handle, int option, int64_t value) {
    return ((tern_curl_variadic)function)(handle, option, value);
}

int tern_curl_getinfo(void *function, void *handle, int info, void *out) {
    return ((tern_curl_variadic)function)(handle, info, out);
}
