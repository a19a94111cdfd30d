#!/usr/bin/python3
"""A lease lock on etcd, in Python with Debian's python3-etcd3 (0.12).

The recipe of the Go client's concurrency.Mutex, the catalogue's
etcd-mutex: each client puts a key of its own under the lock's prefix,
attached to a lease; the oldest key holds the lock, and each waiter watches
the key just before its own until it goes. A thread keeps the lease alive
every third of it from its grant on, as a concurrency session does
(python3-etcd3 leaves that to its user). A paused process (SIGSTOP) stops
that thread too: its lease expires and another client takes the lock while
the holder, once resumed, still believes it holds it. Its verdicts are
etcd-mutex's (TestEtcdPyIsTheEtcdMutex). Its token is its key's create
revision.

It reads LOCKLAB_ETCD (the members, through this client's own links),
LOCKLAB_SESSION_MS (the lease to ask for), LOCKLAB_TIMEOUT_MS and
LOCKLAB_CLIENT, and speaks locklab's line protocol on stdin and stdout.
python3-etcd3 0.12 talks to one member: on a broken connection it moves on
to the next one, as the Go client does.

  go run ./cmd/check -lock exec:'python3 programs/etcd-lease.py' -service etcd

With --herd every waiter watches the holder's key, not the one just before
its own, and takes the lock when it goes without reading the queue again:
all of them do at once, the bug explore finds (TestExploreFindsAProgramsBug).
"""
import os
import sys
import threading
import time
import uuid

import etcd3
import grpc
from etcd3 import exceptions

PREFIX = "/locklab/"  # where locklab looks for etcd locks' keys


class Members:
    """The etcd members, one client at a time; on a broken connection the
    next request goes to the next member."""

    def __init__(self, endpoints, timeout, first):
        self.endpoints = endpoints
        self.timeout = timeout
        self.at = first % len(endpoints)
        self.mu = threading.Lock()
        self.clients = {}

    def client(self):
        with self.mu:
            if self.at not in self.clients:
                host, port = self.endpoints[self.at].rsplit(":", 1)
                self.clients[self.at] = etcd3.client(host=host, port=int(port), timeout=self.timeout)
            return self.clients[self.at]

    def call(self, request, tries=2):
        """Runs request(client), on the next member when the connection
        broke, at most tries times; the last error is raised."""
        for attempt in range(tries):
            cli = self.client()
            try:
                return request(cli)
            except (exceptions.ConnectionFailedError, exceptions.ConnectionTimeoutError):
                with self.mu:
                    if self.clients.get(self.at) is cli:
                        self.at = (self.at + 1) % len(self.endpoints)
                if attempt == tries - 1:
                    raise


class Held:
    """One held lock: its key, its create revision (the token), its lease,
    kept alive."""

    def __init__(self, members, key, lease, ttl, revision):
        self.members, self.key, self.lease, self.revision = members, key, lease, revision
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.keep_alive, args=(ttl,), daemon=True)
        self.thread.start()

    def keep_alive(self, ttl):
        # Event.wait, not time.sleep: libfaketime breaks the latter.
        while not self.stop.wait(ttl / 3):
            try:
                self.members.call(lambda c: list(c.refresh_lease(self.lease)))
            except Exception as e:  # the next period tries again
                print("keep-alive:", e, file=sys.stderr)


def acquire(members, key, ttl, timeout, herd=False):
    """Takes the lock, waiting for the keys before ours to go at most
    timeout seconds; returns the Held lock or None when refused. On an
    error it revokes the lease, which deletes any key it queued with, and
    only when that fails too is the outcome unknown (an error answer)."""
    lease = members.call(lambda c: c.lease(ttl)).id
    # Kept alive from the grant on, as a session is: a waiter's key too.
    session = Held(members, PREFIX + key + "/%x" % lease, lease, ttl, 0)
    try:
        if wait(members, session, PREFIX + key + "/", time.monotonic() + timeout, herd):
            return session
        err = None
    except Exception as e:  # the watch hands on a broken stream as it is
        err = e
    session.stop.set()
    # Revoking the lease deletes our key: the lock is surely not ours.
    revoke(members, lease)
    if err is not None:
        print("acquire:", err, file=sys.stderr)
    return None


def revoke(members, lease):
    """Revokes lease; one that is gone already (expired) is revoked too."""
    try:
        members.call(lambda c: c.revoke_lease(lease))
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            raise


def wait(members, session, prefix, deadline, herd=False):
    """Queues session's key under prefix and waits until it is the oldest,
    until deadline; returns whether it holds the lock. A herd waits for the
    holder's key alone (--herd)."""
    name, lease = session.key, session.lease
    # A retry finds our key made already.
    members.call(lambda c: c.transaction(
        compare=[c.transactions.create(name) == 0],
        success=[c.transactions.put(name, "", lease=lease)], failure=[]))
    _, mine = members.call(lambda c: c.get(name))
    if mine is None:
        return False  # the lease expired while we queued
    while True:
        resp = members.call(lambda c: c.get_prefix_response(prefix, sort_order="ascend", sort_target="create"))
        if not any(kv.key == name.encode() for kv in resp.kvs):
            # Our lease expired while we waited, and our key with it: the
            # keys before ours say nothing any more (Mutex.Lock's
            # ErrSessionExpired).
            return False
        before = [kv for kv in resp.kvs if kv.create_revision < mine.create_revision]
        if not before:
            session.revision = mine.create_revision
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            # The newest key before ours, from the revision we read, so
            # that a delete made before the watch starts is not missed.
            members.client().watch_once((before[0] if herd else before[-1]).key, timeout=left, start_revision=resp.header.revision + 1)
        except exceptions.WatchTimedOut:
            return False
        except Exception:  # a broken stream: read again
            continue
        if herd:
            session.revision = mine.create_revision
            return True


def release(members, held):
    """Deletes our key, then revokes the lease; returns whether our key was
    still there."""
    held.stop.set()
    ok, _ = members.call(lambda c: c.transaction(
        compare=[c.transactions.create(held.key) == held.revision],
        success=[c.transactions.delete(held.key)], failure=[]))
    try:
        revoke(members, held.lease)
    except Exception:
        pass  # a lease no longer kept alive expires on its own
    return ok


def main():
    herd = "--herd" in sys.argv[1:]
    members = Members(os.environ["LOCKLAB_ETCD"].split(","),
                      int(os.environ["LOCKLAB_TIMEOUT_MS"]) / 1000, int(os.environ["LOCKLAB_CLIENT"]))
    ttl = max(1, int(os.environ["LOCKLAB_SESSION_MS"]) // 1000)
    timeout = int(os.environ["LOCKLAB_TIMEOUT_MS"]) / 1000
    held = {}
    for line in sys.stdin:
        verb, _, key = line.strip().partition(" ")
        try:
            if verb == "acquire":
                h = acquire(members, key, ttl, timeout, herd)
                if h is None:
                    answer = "refused"
                else:
                    held[key] = h
                    answer = "ok %d" % h.revision
            elif verb == "reset":
                # Between two runs on one warm deployment: forget every
                # lock held, and stop its keep-alive, without a word to
                # etcd (the deployment's reset revokes the leases).
                for h in held.values():
                    h.stop.set()
                held.clear()
                answer = "ok"
            elif verb == "release":
                h = held.pop(key, None)
                answer = "not-held" if h is None else ("ok" if release(members, h) else "not-held")
            else:
                answer = "error unknown request " + verb
        except Exception as e:
            answer = "error " + (type(e).__name__ + " " + str(e)).replace("\n", " ")
        print(answer, flush=True)


if __name__ == "__main__":
    main()
