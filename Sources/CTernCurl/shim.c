#include "CTernCurl.h"

#ifdef __linux__
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
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

int64_t tern_monotonic_now(void) {
#ifdef __linux__
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
#else
    return 0;
#endif
}

int tern_curl_socket_callback(void *easy, int socket, int what, void *watch, void *socketp) {
    (void)easy;
    (void)socketp;
#ifdef __linux__
    int epoll = ((tern_curl_watch *)watch)->epoll;
    if (what == 4) {  // CURL_POLL_REMOVE
        epoll_ctl(epoll, EPOLL_CTL_DEL, socket, NULL);
        return 0;
    }
    struct epoll_event event = {0};
    event.events = ((what & 1) ? EPOLLIN : 0) | ((what & 2) ? EPOLLOUT : 0);
    event.data.fd = socket;
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0 && errno == ENOENT) {
        epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event);
    }
#else
    (void)socket;
    (void)what;
    (void)watch;
#endif
    return 0;
}

int tern_epoll_open(void) {
#ifdef __linux__
    return epoll_create1(EPOLL_CLOEXEC);
#else
    return -1;
#endif
}

int tern_epoll_watch_input(int epoll, int fd) {
#ifdef __linux__
    struct epoll_event event = {0};
    event.events = EPOLLIN;
    event.data.fd = fd;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
#else
    (void)epoll;
    (void)fd;
    return -1;
#endif
}

int tern_epoll_wait(int epoll, int *fds, int *masks, int capacity, int timeout_ms) {
#ifdef __linux__
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll, events, capacity, timeout_ms);
    if (count < 0) return 0;  // EINTR: as a timeout
    for (int i = 0; i < count; i++) {
        uint32_t got = events[i].events;
        fds[i] = events[i].data.fd;
        masks[i] = ((got & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) ? 1 : 0) | ((got & EPOLLOUT) ? 2 : 0) | ((got & EPOLLERR) ? 4 : 0);
    }
    return count;
#else
    (void)epoll;
    (void)fds;
    (void)masks;
    (void)capacity;
    (void)timeout_ms;
    return 0;
#endif
}

typedef int (*tern_curl_socket_action_function)(void *, int, int, int *);

int tern_curl_socket_action(void *function, void *multi, int socket, int mask, int *running) {
    return ((tern_curl_socket_action_function)function)(multi, socket, mask, running);
}

void tern_curl_watch_install(void *multi_setopt, void *multi, tern_curl_watch *watch) {
    tern_curl_variadic setopt = (tern_curl_variadic)multi_setopt;
    setopt(multi, 20001, tern_curl_socket_callback);  // CURLMOPT_SOCKETFUNCTION
    setopt(multi, 10002, (void *)watch);              // CURLMOPT_SOCKETDATA
}

typedef int (*tern_curl_socket_all_function)(void *, int *);

int tern_curl_socket_all(void *function, void *multi, int *running) {
    return ((tern_curl_socket_all_function)function)(multi, running);
}
