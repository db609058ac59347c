#include "CTernCurl.h"

#ifdef __linux__
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#endif

typedef int (*tern_curl_variadic)(void *, int, ...);

int tern_curl_setopt_long(tern_curl_function function, void *handle, int option, long value) {
    return ((tern_curl_variadic)function)(handle, option, value);
}

int tern_curl_setopt_pointer(tern_curl_function function, void *handle, int option, const void *value) {
    return ((tern_curl_variadic)function)(handle, option, value);
}

int tern_curl_setopt_offset(tern_curl_function function, void *handle, int option, int64_t value) {
    return ((tern_curl_variadic)function)(handle, option, value);
}

int tern_curl_getinfo(tern_curl_function function, void *handle, int info, void *out) {
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

#ifdef __linux__
typedef int (*tern_curl_fdset_function)(void *, fd_set *, fd_set *, fd_set *, int *);
#endif

int tern_curl_single_input_socket(tern_curl_function fdset_function, void *multi) {
#ifdef __linux__
    fd_set input, output, other;
    FD_ZERO(&input);
    FD_ZERO(&output);
    FD_ZERO(&other);
    int highest = -1;
    if (((tern_curl_fdset_function)fdset_function)(multi, &input, &output, &other, &highest) != 0) return -1;
    if (highest < 0) return -2;  // none it could report: a running transfer's socket is at FD_SETSIZE or above
    int found = -1;
    for (int fd = 0; fd <= highest; fd++) {
        if (FD_ISSET(fd, &output)) return -1;
        if (FD_ISSET(fd, &input)) {
            if (found >= 0) return -1;
            found = fd;
        }
    }
    return found;
#else
    (void)fdset_function;
    (void)multi;
    return -1;
#endif
}

int64_t tern_monotonic_now(void) {
#ifdef __linux__
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
#else
    return 0;
#endif
}

int tern_epoll_open(int wakeup) {
#ifdef __linux__
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) return -1;
    struct epoll_event event = {0};
    event.events = EPOLLIN;
    event.data.fd = wakeup;
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event) != 0) {
        close(epoll);
        return -1;
    }
    return epoll;
#else
    (void)wakeup;
    return -1;
#endif
}

int tern_epoll_watch_once(int epoll, int socket) {
#ifdef __linux__
    struct epoll_event event = {0};
    event.events = EPOLLIN | EPOLLONESHOT;
    event.data.fd = socket;
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0) return 0;
    return errno == EEXIST ? epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) : -1;
#else
    (void)epoll;
    (void)socket;
    return -1;
#endif
}

void tern_epoll_forget(int epoll, int socket) {
#ifdef __linux__
    epoll_ctl(epoll, EPOLL_CTL_DEL, socket, NULL);  // ENOENT or EBADF when already gone: nothing to do
#else
    (void)epoll;
    (void)socket;
#endif
}

int tern_epoll_wait(int epoll, int wakeup, int timeout_ms) {
#ifdef __linux__
    struct epoll_event events[8];
    int count = epoll_wait(epoll, events, 8, timeout_ms);
    for (int i = 0; i < count; i++) {
        if (events[i].data.fd == wakeup) tern_wakeup_clear(wakeup);
    }
    return count < 0 ? 0 : count;  // EINTR: as a timeout
#else
    (void)epoll;
    (void)wakeup;
    (void)timeout_ms;
    return 0;
#endif
}
