#!/usr/bin/python3
"""Your lock for the no-renewal exercise. Grade it with
    check -lock exec:'/usr/bin/python3 python/no-renewal.py' -grade no-renewal
which runs it through slow-work: client 0's second critical section takes
two and a half leases. TODO: nothing extends the lease while the work runs."""
import os
import sys
import time
import threading

import redis
from redis.sentinel import Sentinel

ttl_ms = int(os.environ["LOCKLAB_TTL_MS"])
timeout = int(os.environ.get("LOCKLAB_TIMEOUT_MS", "1000")) / 1000
opts = dict(socket_timeout=timeout, socket_connect_timeout=timeout)
if "LOCKLAB_SENTINELS" in os.environ:
    addrs = [a.rsplit(":", 1) for a in os.environ["LOCKLAB_SENTINELS"].split(",")]
    r = Sentinel([(h, int(p)) for h, p in addrs], sentinel_kwargs=opts).master_for(os.environ["LOCKLAB_MASTER"], **opts)
else:
    host, port = os.environ["LOCKLAB_REDIS"].rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port), **opts)
me = "client-" + os.environ.get("LOCKLAB_CLIENT", "0")
acquires = 0
held = {}  # key -> (token, Event that stops its renewal)

RELEASE = r.register_script("""
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("DEL", KEYS[1])
end
return 0""")
RENEW = r.register_script("""
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0""")


def renewal(key, token, stop):
    # Event.wait, not time.sleep: under libfaketime, time.sleep fails.
    while not stop.wait(ttl_ms / 3000):
        try:
            if RENEW(keys=[key], args=[token, ttl_ms]) == 0:
                return  # lost it: nothing left to renew
        except redis.RedisError:
            pass  # try again at the next tick


def acquire(key):
    global acquires
    acquires += 1
    token = "%s-%d" % (me, acquires)
    start = time.monotonic()
    if not r.set(key, token, nx=True, px=ttl_ms):
        return "refused"
    if time.monotonic() - start > ttl_ms / 2000:
        # The reply came so late that the lease may be gone already (a
        # pause, a loaded machine): give back a lock we cannot trust.
        RELEASE(keys=[key], args=[token])
        return "refused"
    stop = threading.Event()  # the renewal's, in the next exercise
    held[key] = (token, stop)
    return "ok"


def release(key):
    if key not in held:
        return "not-held"
    token, stop = held.pop(key)
    stop.set()
    return "ok" if RELEASE(keys=[key], args=[token]) == 1 else "not-held"


for line in sys.stdin:
    verb, key = line.split()
    try:
        out = acquire(key) if verb == "acquire" else release(key)
    except redis.RedisError as e:
        out = "error " + " ".join(str(e).split())
    print(out, flush=True)
