"""generation.backends.client_threads: worker threads that each own one client, kept across batches."""

import threading
import time

import pytest

from generation.backends.client_threads import ClientThreads, ClientThreadsClosed


class FakeClient:
    def __init__(self):
        self.owner = threading.current_thread()
        self.closed = False
        self.calls = 0

    def close(self):
        self.closed = True


def make_threads(max_workers: int) -> tuple[ClientThreads, list[FakeClient]]:
    made: list[FakeClient] = []

    def make():
        client = FakeClient()
        made.append(client)
        return client

    return ClientThreads(max_workers, make, name="test-client"), made


def test_each_thread_makes_one_client_and_keeps_it_across_batches():
    threads, made = make_threads(3)
    in_flight = 0
    most = 0
    lock = threading.Lock()

    def work(item):
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        client = threads.client()
        assert client.owner is threading.current_thread()  # a thread only ever gets its own client
        assert threads.client() is client
        client.calls += 1
        time.sleep(0.005)
        with lock:
            in_flight -= 1
        return item * 2

    for size in (1, 20, 2, 30):
        assert threads.map(work, range(size)) == [2 * i for i in range(size)]  # in order
    assert most <= 3
    assert 1 <= len(made) == threads.clients_made <= 3
    assert len({client.owner for client in made}) == len(made)
    assert sum(client.calls for client in made) == 53
    threads.close()


def test_close_closes_every_client_and_ends_the_threads():
    threads, made = make_threads(4)
    workers = set()

    def work(item):
        threads.client()
        workers.add(threading.current_thread())
        time.sleep(0.01)
        return item

    threads.map(work, range(12))
    assert made and not any(client.closed for client in made)
    threads.close()
    assert threads.closed and all(client.closed for client in made)
    for worker in workers:
        worker.join(timeout=5)
        assert not worker.is_alive()
    with pytest.raises(ClientThreadsClosed):
        threads.map(work, [1])
    with pytest.raises(ClientThreadsClosed):
        threads.client()
    threads.close()  # a second close does nothing


def test_work_queued_when_closed_still_runs_and_gets_no_client():
    threads, made = make_threads(1)
    started = threading.Event()

    def work(item):
        if item == 0:
            threads.client()
            started.set()
            time.sleep(0.2)
            return "first"
        try:
            threads.client()
        except ClientThreadsClosed:
            return "refused"
        return "served"

    closer = threading.Thread(target=lambda: (started.wait(5), threads.close()))
    closer.start()
    assert threads.map(work, range(4)) == ["first", "refused", "refused", "refused"]
    closer.join()
    assert len(made) == 1 and made[0].closed


def test_at_least_one_worker():
    with pytest.raises(ValueError, match="at least 1"):
        ClientThreads(0, FakeClient)
