#!/usr/bin/env bash
# Installs what locklab needs to run, when it is missing: redis-server, MariaDB
# for the transaction pitfall (unlock-before-commit) and the mariadb topology,
# PostgreSQL for the postgres topology, etcd for the etcd topology, and
# ZooKeeper (Java 17 and the server's jars) for the zookeeper topology, and
# memcached for the memcached topology. As root
# with apt-get it also
# installs what some tests use, which skip without it: Chromium (the report's
# browser test), php-cli with php-redis and php-mysql, python3-redis, python3-etcd3,
# python3-psycopg2, python3-kazoo and python3-pymemcache (the program locks), and faketime
# (their real clock skew).
# Idempotent: does nothing when everything is there.
set -euo pipefail

have_redis() {
	if [ -n "${REDIS_SERVER:-}" ]; then
		[ -x "$REDIS_SERVER" ]
	else
		command -v redis-server >/dev/null 2>&1
	fi
}

# have_mariadb looks where the harness (MariaDBPath) looks: in $MARIADB_BIN_DIR when
# set, else on PATH; the server also in the sbin next to mariadb-install-db's bin,
# where Debian and Fedora put it.
have_mariadb() {
	local search="${MARIADB_BIN_DIR:-$PATH}" installdb sbin
	installdb=$(PATH="$search" command -v mariadb-install-db || PATH="$search" command -v mysql_install_db) || return 1
	sbin="$(dirname "$(dirname "$installdb")")/sbin"
	PATH="$search:$sbin" command -v mariadbd >/dev/null 2>&1 || PATH="$search:$sbin" command -v mysqld >/dev/null 2>&1
}

# have_postgres looks where the harness (PostgresPath) looks: in $POSTGRES_BIN_DIR
# when set, else on PATH, else in /usr/lib/postgresql/*/bin, where Debian puts it.
have_postgres() {
	if [ -n "${POSTGRES_BIN_DIR:-}" ]; then
		[ -x "$POSTGRES_BIN_DIR/initdb" ] && [ -x "$POSTGRES_BIN_DIR/postgres" ]
		return
	fi
	local d
	if command -v initdb >/dev/null 2>&1; then
		d=$(dirname "$(command -v initdb)")
		[ -x "$d/postgres" ] && return 0
	fi
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && [ -x "$d/postgres" ] && return 0
	done
	return 1
}

# have_etcd looks where the harness (EtcdPath) looks: $ETCD when set, else PATH.
have_etcd() {
	command -v "${ETCD:-etcd}" >/dev/null 2>&1
}

# have_zookeeper looks where the harness (ZooKeeperPath) looks: java as $JAVA
# or on PATH, and the server jar as $ZOOKEEPER_JAR or where Debian puts it.
have_zookeeper() {
	command -v "${JAVA:-java}" >/dev/null 2>&1 && [ -f "${ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}" ]
}

# have_memcached looks where the harness (ServerSpec.Program) looks: on PATH.
have_memcached() {
	command -v memcached >/dev/null 2>&1
}

# missing prints the packages to install, separated by spaces; no arrays, which
# macOS's bash 3 mishandles under set -u when they are empty.
missing() {
	have_redis || printf ' redis-server'
	have_mariadb || printf ' mariadb-server'
	have_postgres || printf ' postgresql'
	have_etcd || printf ' etcd-server'
	have_zookeeper || printf ' zookeeper'
	have_memcached || printf ' memcached'
}

if ! command -v go >/dev/null 2>&1; then
	echo "deps: Go is not installed: see https://go.dev/doc/install (Go 1.26 or newer)" >&2
	exit 1
fi

# optional prints the packages that only some tests need, when missing.
optional() {
	command -v chromium >/dev/null 2>&1 || printf ' chromium'
	command -v php >/dev/null 2>&1 || printf ' php-cli'
	{ command -v php >/dev/null 2>&1 && php -m 2>/dev/null | grep -x redis >/dev/null; } || printf ' php-redis'
	{ command -v php >/dev/null 2>&1 && php -m 2>/dev/null | grep -x pdo_mysql >/dev/null; } || printf ' php-mysql'
	{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import redis' >/dev/null 2>&1; } || printf ' python3-redis'
	{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import etcd3' >/dev/null 2>&1; } || printf ' python3-etcd3 python3-grpcio'
	{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1; } || printf ' python3-psycopg2'
	{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1; } || printf ' python3-kazoo'
	{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pymemcache' >/dev/null 2>&1; } || printf ' python3-pymemcache'
	[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || [ -n "$(find /usr/lib -name libfaketime.so.1 -print -quit 2>/dev/null)" ] || printf ' faketime'
}

# Optional packages first, and never fatal: a test that lacks one says so and skips.
extra=$(optional)
if [ -n "$extra" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$extra from the system's packages (for the tests that need them)" >&2
	# shellcheck disable=SC2086 # $extra is a list of package names
	if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $extra >/dev/null; }; then
		echo "deps: could not install$extra; the tests that need them will skip" >&2
	fi
fi

todo=$(missing)
if [ -z "$todo" ]; then
	exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$todo from the system's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # $todo is a list of package names
	apt-get install -y -qq $todo >/dev/null
	# The packages may start system services; locklab starts its own servers.
	if command -v service >/dev/null 2>&1; then
		case $todo in *redis-server*) service redis-server stop >/dev/null 2>&1 || true ;; esac
		case $todo in *mariadb-server*) service mariadb stop >/dev/null 2>&1 || true ;; esac
		case $todo in *postgresql*) service postgresql stop >/dev/null 2>&1 || true ;; esac
		case $todo in *etcd-server*) service etcd stop >/dev/null 2>&1 || true ;; esac
		# Debian's zookeeper package starts no server (zookeeperd would).
		case $todo in *zookeeper*) service zookeeper stop >/dev/null 2>&1 || true ;; esac
		case $todo in *memcached*) service memcached stop >/dev/null 2>&1 || true ;; esac
	fi
	todo=$(missing)
	if [ -z "$todo" ]; then
		exit 0
	fi
fi

case $todo in *redis-server*)
	cat >&2 <<'MSG'
deps: redis-server is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y redis-server
  Fedora:         sudo dnf install -y redis
  macOS:          brew install redis
or point REDIS_SERVER at a redis-server binary.
MSG
	;;
esac
case $todo in *mariadb-server*)
	cat >&2 <<'MSG'
deps: MariaDB (mariadb-install-db and mariadbd) is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y mariadb-server
  Fedora:         sudo dnf install -y mariadb-server
  macOS:          brew install mariadb
or point MARIADB_BIN_DIR at the directory that holds mariadb-install-db and mariadbd.
MSG
	;;
esac
case $todo in *postgresql*)
	cat >&2 <<'MSG'
deps: PostgreSQL (initdb and postgres) is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y postgresql
  Fedora:         sudo dnf install -y postgresql-server
  macOS:          brew install postgresql
or point POSTGRES_BIN_DIR at the directory that holds initdb and postgres.
MSG
	;;
esac
case $todo in *etcd-server*)
	cat >&2 <<'MSG'
deps: etcd is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y etcd-server
  Fedora:         sudo dnf install -y etcd
  macOS:          brew install etcd
or point ETCD at an etcd binary.
MSG
	;;
esac
case $todo in *zookeeper*)
	cat >&2 <<'MSG'
deps: ZooKeeper (java and zookeeper.jar) is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y zookeeper
or point JAVA at a java binary (17 or newer) and ZOOKEEPER_JAR at a ZooKeeper 3.8 server jar
whose manifest names its dependencies.
MSG
	;;
esac
case $todo in *memcached*)
	cat >&2 <<'MSG'
deps: memcached is not installed. Install it, then run make again:
  Debian/Ubuntu:  sudo apt-get install -y memcached
  Fedora:         sudo dnf install -y memcached
  macOS:          brew install memcached
MSG
	;;
esac
exit 1
