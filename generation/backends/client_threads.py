"""Worker threads that each own one client (one kept-alive connection), for backends that call a server.

`ClientThreads(max_workers, make_client)` runs work on at most `max_workers` threads, which live as
long as it does, across batches. A thread builds its own client with `make_client()` the first time
its work asks for one (`client()`) and keeps it: each thread has its connection to itself, so no
connection pool is shared between threads (no lock is contended and no list of connections is walked
on each request), the number of clients never exceeds `max_workers`, and a connection opened in one
batch carries the next batch's requests.

`close()` stops the threads once their queued work is done and closes every client made; after it,
`client()` raises `ClientThreadsClosed` (so work still queued fails fast) and `map` refuses new work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Generic, Protocol, TypeVar


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)
T = TypeVar("T")
R = TypeVar("R")


class ClientThreadsClosed(RuntimeError):
    """Work was asked of (or a client asked for from) ClientThreads after `close()`."""


class ClientThreads(Generic[C]):
    def __init__(self, max_workers: int, make_client: Callable[[], C], *, name: str = "client"):
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self._make_client = make_client
        self._name = name
        self._local = threading.local()
        self._lock = threading.Lock()
        self._clients: list[C] = []
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self._made = 0

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def clients_made(self) -> int:
        """How many clients (one per thread that needed one) were made, closed ones included."""
        return self._made

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`[fn(item) for item in items]`, run on the worker threads; the results keep the order."""
        with self._lock:  # so that close() cannot shut the executor down between two submits
            if self._closed:
                raise ClientThreadsClosed(f"{self._name} threads are closed")
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix=self._name)
            futures = [self._executor.submit(fn, item) for item in items]
        wait(futures)  # the caller wakes once for the batch, not once per result taken in order
        return [future.result() for future in futures]

    def client(self) -> C:
        """The calling thread's own client, made on its first call."""
        if self._closed:
            raise ClientThreadsClosed(f"{self._name} threads are closed")
        client = getattr(self._local, "client", None)
        if client is None:
            with self._lock:
                if self._closed:
                    raise ClientThreadsClosed(f"{self._name} threads are closed")
                client = self._make_client()
                self._clients.append(client)
                self._made += 1
            self._local.client = client
        return client

    def close(self) -> None:
        """Close every client made and let the threads end; calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            clients, self._clients = self._clients, []
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)  # queued work still runs, and fails fast at client()
        for client in clients:
            client.close()
