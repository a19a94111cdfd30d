#!/usr/bin/python3
"""ZooKeeper's lock recipe, in Python with Debian's python3-kazoo (2.8).

kazoo's Lock: each acquire creates an ephemeral sequential node under the
lock's parent, the lowest holds the lock, and each waiter watches the node
just before its own. It is the recipe of go-zookeeper's Lock, the
catalogue's zk-lock, and has its flaw: the node lives only as long as the
holder's session, and a holder whose session expired (a process paused
past its session timeout, SIGSTOP stopping kazoo's heartbeat thread too)
is not told; it still believes it holds the lock. Its verdicts are
zk-lock's (TestKazooIsZkLock). It answers no fencing token, as zk-lock has none.

It reads LOCKLAB_ZOOKEEPER (the servers, through this client's own links),
LOCKLAB_SESSION_MS (the session timeout to ask for), LOCKLAB_TIMEOUT_MS
and LOCKLAB_CLIENT, and speaks locklab's line protocol on stdin and stdout.

  go run ./cmd/check -lock exec:'/usr/bin/python3 programs/zk-lock.py' -service zookeeper
"""
import logging
import os
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout
from kazoo.retry import KazooRetry

ROOT = "/locklab/"  # where locklab looks for ZooKeeper locks' nodes


def connect(session, timeout):
    """A new kazoo client, its session started."""
    # One try per request: a request whose outcome is unknown is an error
    # answer, not a silent retry (kazoo's default retries forever).
    zk = KazooClient(hosts=os.environ["LOCKLAB_ZOOKEEPER"], timeout=session,
                     connection_retry=KazooRetry(max_tries=-1, max_delay=session / 4),
                     command_retry=KazooRetry(max_tries=0),
                     logger=logging.getLogger("quiet"))
    zk.start(timeout=max(timeout, 5))
    return zk


def main():
    session = int(os.environ["LOCKLAB_SESSION_MS"]) / 1000
    timeout = int(os.environ["LOCKLAB_TIMEOUT_MS"]) / 1000
    logging.getLogger("quiet").addHandler(logging.NullHandler())
    logging.getLogger("quiet").propagate = False
    zk = connect(session, timeout)
    client = os.environ["LOCKLAB_CLIENT"]
    held = {}
    was_reset = False
    for line in sys.stdin:
        verb, _, key = line.strip().partition(" ")
        if was_reset:
            # The first request after a reset (locklab's warm-up, untimed)
            # starts a new session on a new client, as a fresh process
            # does: the last run's, whose connection locklab closed, is not
            # resumed. Not the stopped client started again: after a run
            # whose holder was paused past its session, start() sent a close
            # request first on the new session (the one kazoo's stop()
            # queues, and that stop() had left queued), closing it, and every
            # request of the run failed with ConnectionClosedError.
            zk = connect(session, timeout)
            was_reset = False
        try:
            if verb == "acquire":
                lock = zk.Lock(ROOT + key, "client " + client)
                try:
                    got = lock.acquire(timeout=timeout)
                except LockTimeout:
                    got = False
                if got:
                    held[key] = lock
                    answer = "ok"
                else:
                    answer = "refused"
            elif verb == "reset":
                # Between two runs on one warm deployment: forget every
                # lock held and stop the session's client (the deployment's
                # reset deletes the nodes; locklab closed the connection,
                # so no closeSession reaches the server).
                held.clear()
                zk.stop()
                zk.close()
                was_reset = True
                answer = "ok"
            elif verb == "release":
                lock = held.pop(key, None)
                # kazoo's release deletes the node if it still exists and
                # says True either way: the recipe cannot tell a lost lock.
                answer = "not-held" if lock is None else ("ok" if lock.release() else "not-held")
            else:
                answer = "error unknown request " + verb
        except Exception as e:
            answer = "error " + (type(e).__name__ + " " + str(e)).replace("\n", " ")
        print(answer, flush=True)


if __name__ == "__main__":
    main()
