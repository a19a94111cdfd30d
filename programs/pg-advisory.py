#!/usr/bin/python3
"""A PostgreSQL advisory lock, in Python with Debian's python3-psycopg2.

pg_try_advisory_lock(hashtext(KEY)) takes it and pg_advisory_unlock gives
it back, both on the one connection (session) the program keeps: the lock
belongs to that session, and the server frees it when the session ends (a
crash, pg_terminate_backend) while the holder, if it lives, still believes
it holds it. Its verdicts are those of the catalogue's advisory-pinned
(TestPgAdvisoryPyIsAdvisoryPinned). A connection whose request broke is
closed, which ends its session and any lock it held, and the next request
opens another.

It reads LOCKLAB_POSTGRES (through this client's own link),
LOCKLAB_TIMEOUT_MS and LOCKLAB_CLIENT, and speaks locklab's line protocol
on stdin and stdout.

  go run ./cmd/check -lock exec:'python3 programs/pg-advisory.py' -service postgres
"""
import os
import sys

import psycopg2


def connect(dsn, timeout_ms):
    # libpq's connect timeout counts whole seconds, two at least; a request
    # on a cut link gives up once its data goes unacknowledged that long.
    conn = psycopg2.connect(dsn, connect_timeout=max(2, timeout_ms // 1000),
                            tcp_user_timeout=timeout_ms, keepalives_idle=1,
                            application_name="locklab-client-" + os.environ["LOCKLAB_CLIENT"])
    conn.autocommit = True
    return conn


def main():
    dsn = os.environ["LOCKLAB_POSTGRES"]
    timeout_ms = int(os.environ["LOCKLAB_TIMEOUT_MS"])
    conn = None
    for line in sys.stdin:
        verb, _, key = line.strip().partition(" ")
        if verb == "reset":
            # Between two runs on one warm deployment: its locks live in
            # its session, which locklab's relay closed; start another at
            # the next request.
            if conn is not None:
                conn.close()
                conn = None
            print("ok", flush=True)
            continue
        if verb not in ("acquire", "release"):
            print("error unknown request " + verb, flush=True)
            continue
        try:
            if conn is None:
                conn = connect(dsn, timeout_ms)
            with conn.cursor() as cur:
                if verb == "acquire":
                    cur.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,))
                    answer = "ok" if cur.fetchone()[0] else "refused"
                else:
                    cur.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
                    answer = "ok" if cur.fetchone()[0] else "not-held"
        except psycopg2.Error as e:
            # Its lock state is unknown: end the session, and its locks.
            if conn is not None:
                conn.close()
                conn = None
            answer = "error " + str(e).replace("\n", " ")
        print(answer, flush=True)


if __name__ == "__main__":
    main()
