// Calls to libcurl's variadic functions (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt)
// through pointers Tern looked up at run time with dlsym: Swift cannot call a C variadic function
// through a pointer, and calling one as if it were not variadic is undefined behaviour. No libcurl
// header is needed: the project loads libcurl at run time (see Sources/Tern/Transport/Curl).
// Also the transport loop's eventfd and epoll descriptor (Swift's Glibc module does not declare
// eventfd), and libcurl's socket callback, which keeps the epoll set in step.
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

/// A wake-up signal for an event loop that polls it beside libcurl's sockets: a non-blocking
/// eventfd (one 8-byte write to signal, one read to clear), cheaper than the socket pair behind
/// curl_multi_wakeup. -1 where there is none.
int tern_wakeup_open(void);
/// Signals it: the loop's next (or current) poll returns.
void tern_wakeup_signal(int fd);
/// Clears it after a poll saw it.
void tern_wakeup_clear(int fd);
/// Closes it.
void tern_wakeup_close(int fd);

/// What libcurl's socket callback (CURLMOPT_SOCKETFUNCTION) keeps for the event loop: the epoll
/// descriptor the sockets are watched in.
typedef struct {
    int epoll;
} tern_curl_watch;

/// The socket callback: watches `socket` in `((tern_curl_watch *)watch)->epoll` for what libcurl
/// asks (CURL_POLL_IN 1, OUT 2, INOUT 3; REMOVE 4 stops watching).
int tern_curl_socket_callback(void *easy, int socket, int what, void *watch, void *socketp);
/// CLOCK_MONOTONIC in nanoseconds.
int64_t tern_monotonic_now(void);
/// A close-on-exec epoll descriptor, or -1.
int tern_epoll_open(void);
/// Watches `fd` for input (the wakeup's eventfd).
int tern_epoll_watch_input(int epoll, int fd);
/// Waits up to `timeout_ms` for the watched descriptors; fills `fds` and `masks` (libcurl's
/// CURL_CSELECT_IN 1, OUT 2, ERR 4) and returns how many are ready (0 on timeout or a signal).
int tern_epoll_wait(int epoll, int *fds, int *masks, int capacity, int timeout_ms);
/// curl_multi_socket_action through the pointer looked up at run time.
int tern_curl_socket_action(void *function, void *multi, int socket, int mask, int *running);
/// curl_multi_socket_all (every transfer driven, as curl_multi_perform, the sockets re-reported).
int tern_curl_socket_all(void *function, void *multi, int *running);
/// Installs the socket callback above on `multi`, with `watch` as its data (`multi_setopt`:
/// curl_multi_setopt's address).
void tern_curl_watch_install(void *multi_setopt, void *multi, tern_curl_watch *watch);

#endif
