"""An HTTP server for the test fixtures that accepts as fast as the suite connects.

`ThreadingHTTPServer` starts a thread for every connection from its one accept loop, and
`Thread.start()` waits until the new thread has run. With a couple of hundred connection threads
sharing the GIL that wait grew to several milliseconds per connection: when the parallel test pass
opened its connections, up to 116 of them sat in the kernel's accept queue for as long as 3.7 s
before the server read them, and timing tests failed for it.

Here the accept loop only hands each connection to a queue. Worker threads, started ahead of
need by a thread of their own, take connections from it; while fewer than `SPARE` are idle the
spawner starts more, so a burst of long-lived connections (held answers, stalls, keep-alive) never
waits for a thread. Threads are never retired: the suite's peak is a few hundred.
"""
import queue
import sys
import threading
from http.server import HTTPServer

# A waiting thread asks for the GIL sooner (CPython's default interval is 5 ms): the accept loop
# and the request threads keep up while others stream bodies.
sys.setswitchinterval(0.001)


class PooledHTTPServer(HTTPServer):
    """`HTTPServer` with a growing pool of worker threads instead of a thread per connection."""

    daemon_threads = True
    request_queue_size = 1024
    SPARE = 32

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._connections = queue.SimpleQueue()
        self._idle = 0
        self._idle_lock = threading.Lock()
        self._need_workers = threading.Event()
        for _ in range(self.SPARE):
            self._start_worker()
        threading.Thread(target=self._spawn_when_needed, name="spawner", daemon=True).start()

    def process_request(self, request, client_address):
        """Called by the accept loop: queues the connection and returns at once."""
        self._connections.put((request, client_address))
        with self._idle_lock:
            running_low = self._idle <= self.SPARE // 2
        if running_low:
            self._need_workers.set()

    def _start_worker(self):
        with self._idle_lock:
            self._idle += 1
        threading.Thread(target=self._work, name="worker", daemon=True).start()

    def _spawn_when_needed(self):
        while True:
            self._need_workers.wait()
            self._need_workers.clear()
            while True:
                with self._idle_lock:
                    if self._idle >= self.SPARE:
                        break
                self._start_worker()

    def _work(self):
        while True:
            request, client_address = self._connections.get()
            with self._idle_lock:
                self._idle -= 1
                running_low = self._idle <= self.SPARE // 2
            if running_low:
                self._need_workers.set()
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
                with self._idle_lock:
                    self._idle += 1
