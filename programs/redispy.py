#!/usr/bin/python3
"""redis-py's redis.lock.Lock as a locklab lock program: bare, or with
--renew, extending the lease every TTL/3 from a thread.

As an application configures it, not as locklab asks: --prefix=P names the
lock's key P+KEY (lock:orders:KEY), and --lease-ms=N holds a lease of N ms
whatever LOCKLAB_TTL_MS says (a whole-second one: --lease-ms=1000). locklab
learns both from the program's own SET (the run's footprint)."""
import os
import sys
import threading

import redis
from redis.exceptions import LockError, LockNotOwnedError, RedisError
from redis.sentinel import Sentinel

def flag(name, default):
    for arg in sys.argv[1:]:
        if arg.startswith(name + "="):
            return arg[len(name) + 1:]
    return default


prefix = flag("--prefix", "")
ttl = int(flag("--lease-ms", os.environ["LOCKLAB_TTL_MS"])) / 1000
timeout = int(os.environ.get("LOCKLAB_TIMEOUT_MS", "1000")) / 1000
opts = dict(socket_timeout=timeout, socket_connect_timeout=timeout)
if "LOCKLAB_SENTINELS" in os.environ:
    addrs = [a.rsplit(":", 1) for a in os.environ["LOCKLAB_SENTINELS"].split(",")]
    r = Sentinel([(h, int(p)) for h, p in addrs], sentinel_kwargs=opts).master_for(os.environ["LOCKLAB_MASTER"], **opts)
else:
    host, port = os.environ["LOCKLAB_REDIS"].rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port), **opts)
renew = "--renew" in sys.argv
held = {}  # key -> [(Lock, Event that stops its renewal)], innermost last


def renewal(lock, stop):
    # Event.wait, not time.sleep: under libfaketime, time.sleep fails.
    while not stop.wait(ttl / 3):
        try:
            lock.extend(ttl, replace_ttl=True)
        except LockError:
            return  # lost it: nothing left to renew
        except RedisError:
            pass  # try again at the next tick


def reset():
    # Between two runs on one warm deployment: forget every lock held and
    # stop its renewal, without a word to Redis (the deployment's reset
    # wipes the keys); locklab closed the connections, so drop them too.
    for locks in held.values():
        for _, stop in locks:
            stop.set()
    held.clear()
    r.connection_pool.disconnect()
    return "ok"


def answer(verb, key):
    if verb == "reset":
        return reset()
    if verb == "acquire":
        # thread_local=False: the renewal thread must see the token.
        lock = r.lock(prefix + key, timeout=ttl, blocking=False, thread_local=False)
        if not lock.acquire():
            return "refused"
        stop = threading.Event()
        if renew:
            threading.Thread(target=renewal, args=(lock, stop), daemon=True).start()
        held.setdefault(key, []).append((lock, stop))
        return "ok"
    if not held.get(key):
        return "not-held"
    lock, stop = held[key].pop()
    stop.set()
    lock.release()
    return "ok"


for line in sys.stdin:
    verb, _, key = line.strip().partition(" ")
    try:
        out = answer(verb, key)
    except LockNotOwnedError:
        out = "not-held"
    except (RedisError, LockError) as e:
        out = "error " + " ".join(str(e).split())
    print(out, flush=True)
