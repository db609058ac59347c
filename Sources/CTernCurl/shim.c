#include "CTernCurl.h"

#ifdef __linux__
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>
#endif

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

int tern_wakeup_open(void) {
#ifdef __linux__
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
#else
    return -1;
#endif
}

void tern_wakeup_signal(int fd) {
#ifdef __linux__
    uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);  // EAGAIN only when the counter is full: signalled already
#endif
}

void tern_wakeup_clear(int fd) {
#ifdef __linux__
    uint64_t count;
    (void)!read(fd, &count, sizeof count);
#endif
}

void tern_wakeup_close(int fd) {
#ifdef __linux__
    close(fd);
#endif
}
