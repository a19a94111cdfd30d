#!/usr/bin/env bash
# Installs what locklab needs to run, when it is missing: redis-server.
# Idempotent: does nothing when everything is there.
set -euo pipefail

have_redis() {
	if [ -n "${REDIS_SERVER:-}" ]; then
		[ -x "$REDIS_SERVER" ]
	else
		command -v redis-server >/dev/null 2>&1
	fi
}

if ! command -v go >/dev/null 2>&1; then
	echo "deps: Go is not installed: see https://go.dev/doc/install (Go 1.26 or newer)" >&2
	exit 1
fi

if have_redis; then
	exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing redis-server from the system's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq redis-server >/dev/null
	# The package may start a system service; locklab starts its own servers.
	if command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
	have_redis && exit 0
fi

cat >&2 <<'MSG'
deps: redis-server is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y redis-server
  Fedora:         sudo dnf install -y redis
  macOS:          brew install redis
or point REDIS_SERVER at a redis-server binary.
MSG
exit 1
