// Calls to libcurl's variadic functions (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt)
// through pointers Tern looked up at run time with dlsym: Swift cannot call a C variadic function
// through a pointer, and calling one as if it were not variadic is undefined behaviour. No libcurl
// header is needed: the project loads libcurl at run time (see Sources/Tern/Transport/Curl).
// Also the eventfd that wakes the transport's loop and the epoll set it waits in while idle (Swift's
// Glibc module does not declare eventfd).
#ifndef TERN_CURL_SHIM_H
#define TERN_CURL_SHIM_H

#include <stdint.h>

/// A libcurl function looked up with dlsym, whatever its C type.
typedef void (*tern_curl_function)(void);

/// curl_easy_setopt or curl_multi_setopt with a `long` argument.
int tern_curl_setopt_long(tern_curl_function function, void *handle, int option, long value);
/// curl_easy_setopt or curl_multi_setopt with a pointer argument (strings, lists, callbacks, user data).
int tern_curl_setopt_pointer(tern_curl_function function, void *handle, int option, const void *value);
/// curl_easy_setopt with a `curl_off_t` argument.
int tern_curl_setopt_offset(tern_curl_function function, void *handle, int option, int64_t value);
/// curl_easy_getinfo, writing through `out` (a `long *`, `char **` or `curl_off_t *` by `info`'s type).
int tern_curl_getinfo(tern_curl_function function, void *handle, int info, void *out);

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

/// The one socket libcurl waits on, for input only, across all of `multi`'s transfers
/// (curl_multi_fdset through `fdset_function`); -1 when it waits on several or for output, -2
/// when it reports none (curl_multi_fdset leaves out descriptors at FD_SETSIZE and above).
int tern_curl_single_input_socket(tern_curl_function fdset_function, void *multi);
/// CLOCK_MONOTONIC in nanoseconds.
int64_t tern_monotonic_now(void);
/// A close-on-exec epoll descriptor watching `wakeup` (the eventfd) for input, or -1.
int tern_epoll_open(int wakeup);
/// Watches `socket` once for input (EPOLLONESHOT): the answer to a request sent from another thread.
int tern_epoll_watch_once(int epoll, int socket);
/// Stops watching `socket`.
void tern_epoll_forget(int epoll, int socket);
/// Waits up to `timeout_ms` for the watched descriptors and clears `wakeup` if it was signalled;
/// returns how many were ready (0 on timeout or a signal).
int tern_epoll_wait(int epoll, int wakeup, int timeout_ms);

#endif
