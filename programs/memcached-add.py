#!/usr/bin/python3
"""memcached's cache lock, as many PHP and Python frameworks' are, as a
locklab lock program with pymemcache: `add` of the key with a token of its
own and an expiry, released by `gets` and a `cas` with an expiry of -1
(which expires the item at once) only while the item still holds the
token. No renewal: the item expires at its expiry, however long the holder
works."""
import math
import os
import socket
import sys
import uuid

from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheError

ttl_ms = int(os.environ["LOCKLAB_TTL_MS"])
timeout = int(os.environ.get("LOCKLAB_TIMEOUT_MS", "1000")) / 1000
host, port = os.environ["LOCKLAB_MEMCACHED"].split(",")[0].rsplit(":", 1)
# memcached counts expiry in whole seconds of a clock that ticks once a
# second, so an item added with an expiry of n seconds lives between n-1
# and n: a lease of the TTL at least asks for one second more.
expire = math.ceil(ttl_ms / 1000) + 1
# default_noreply=False: pymemcache's add and delete send noreply unless
# told, and a lock needs the server's answer.
mc = Client((host, int(port)), connect_timeout=timeout, timeout=timeout, default_noreply=False)
held = {}  # key -> tokens of this process's holds, innermost last


def answer(verb, key):
    if verb == "reset":
        # Between two runs on one warm deployment: forget every lock held
        # (the deployment's reset flushes the keys); locklab closed the
        # connection, so drop it too.
        held.clear()
        mc.close()
        return "ok"
    if verb == "acquire":
        token = uuid.uuid4().hex
        if not mc.add(key, token, expire=expire, noreply=False):
            return "refused"
        held.setdefault(key, []).append(token)
        return "ok"
    if not held.get(key):
        return "not-held"
    token = held[key].pop()
    value, cas = mc.gets(key)
    if value is None or value.decode() != token:
        return "not-held"  # expired, and maybe another's now
    # True: expired by us; False: changed since the gets; None: gone.
    return "ok" if mc.cas(key, token, cas, expire=-1, noreply=False) else "not-held"


for line in sys.stdin:
    verb, _, key = line.strip().partition(" ")
    try:
        out = answer(verb, key)
    except (MemcacheError, OSError, socket.timeout) as e:
        out = "error " + (" ".join(str(e).split()) or type(e).__name__)
    print(out, flush=True)
