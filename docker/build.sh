#!/bin/sh
# Builds locklab's container images without any registry: each image is a
# FROM scratch context assembled from this machine's own redis-server,
# mariadbd, postgres, etcd, ZooKeeper with the JRE that runs it, and
# memcached (the Debian packages `make deps` installs) and the shared
# libraries they link. Tags carry the server versions: locklab/redis:<v>,
# locklab/mariadb:<v>, locklab/postgres:<v>, locklab/etcd:<v>,
# locklab/zookeeper:<v>, locklab/memcached:<v>.
# The PostgreSQL, etcd, ZooKeeper and memcached images are built only where
# those servers are installed, and PostgreSQL, etcd and ZooKeeper not by
# -debian: the docker backend skips their topologies' runs without them.
# The memcached image is what the docker backend runs for a lock service's
# server named memcached (cluster.ServerSpec): a server so started runs the
# image locklab/<its program's name>, whose binary is /usr/bin/<that name>.
# The Redis, etcd, ZooKeeper and memcached images run their server under
# locklab-init (docker/init), built here with Go, which crashes and
# restarts it in place in milliseconds. The
# tags also carry the revision of what locklab adds (REVISION): bump it when
# docker/init or this script changes what goes into an image.
# An image whose tag exists is not built again. Where no Docker daemon answers,
# it says so in one line and exits 0, so that `make test` works anywhere.
#
# A machine without those servers (macOS with Docker Desktop, say) gets the
# same images from Debian's packages instead (docker/debian.Dockerfile, FROM
# debian:bookworm-slim, so it needs a registry or that image loaded).
#
# `docker/build.sh check` builds a third image, apart: locklab/check, what
# `check explore` runs in as a Kubernetes Job (docker/k8s/). It holds the check
# binary, built here from this tree, and redis-server, since the local backend
# runs the servers as processes inside the pod (toxiproxy is in-process Go).
# Its tag is a hash of those two binaries, so a changed check gets a new tag
# and a node cannot run a stale one under an old name; it also moves
# locklab/check:latest, which docker/k8s/explore-job.yaml names. It prints
# the tag alone on stdout. It needs this machine's redis-server and Go (the
# host's binaries, whose architecture must be the daemon's): -debian does not
# build it.
#
# Usage: docker/build.sh          build what is missing
#        docker/build.sh -debian  build what is missing from Debian's packages
#        docker/build.sh -tags    print the tags of this machine's images and exit
#        docker/build.sh check    build locklab/check if missing; print its tag
set -eu
cd "$(dirname "$0")/.."
REVISION=5
# What locklab/check holds besides its two binaries: bump it when check_image
# changes the image's layout.
CHECK_REVISION=2

REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
MARIADBD=${MARIADBD:-$(command -v mariadbd || ls /usr/sbin/mariadbd 2>/dev/null || true)}
INSTALL_DB=${INSTALL_DB:-$(command -v mariadb-install-db || command -v mysql_install_db || true)}
SHARE=${MARIADB_SHARE:-/usr/share/mysql}
# PostgreSQL's bin directory: POSTGRES_BIN_DIR, else the newest Debian keeps
# in /usr/lib/postgresql/VERSION/bin (off PATH), else initdb's on PATH.
PG_BIN=${POSTGRES_BIN_DIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [ -z "$PG_BIN" ] && command -v initdb >/dev/null 2>&1; then
	PG_BIN=$(dirname "$(readlink -f "$(command -v initdb)")")
fi
[ -n "$PG_BIN" ] && [ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/initdb" ] || PG_BIN=

# have_image REPO: an image of REPO at this revision exists, whatever its tag.
have_image() {
	[ -n "$(docker images -q --filter "reference=$1" --filter "label=locklab.revision=$REVISION")" ]
}

# debian_images builds the Redis, MariaDB and memcached images that are
# missing from docker/debian.Dockerfile and tags them with the versions of
# the servers they hold.
debian_images() {
	if ! docker version >/dev/null 2>&1; then
		echo "docker/build.sh: no Docker daemon answers; the docker backend's images are not built"
		exit 0
	fi
	missing=
	for image in redis mariadb memcached; do
		have_image locklab/$image || missing="$missing $image"
	done
	if [ -z "$missing" ]; then
		echo "docker/build.sh: locklab/redis, locklab/mariadb and locklab/memcached of revision $REVISION exist"
		exit 0
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/images.locklab.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
	arch=$(docker version -f '{{.Server.Arch}}')
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -o "$work/locklab-init" ./docker/init
	cp docker/debian.Dockerfile "$work/Dockerfile"
	for image in $missing; do
		# The host's network: a build may need a proxy or a mirror the host knows.
		docker build -q --network host --target $image --label locklab.image=$image --label locklab.revision=$REVISION \
			-t locklab/$image:building "$work" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
		case $image in
		redis) v=$(docker run --rm --entrypoint /usr/bin/redis-server locklab/redis:building --version | sed -n 's/.* v=\([^ ]*\).*/\1/p') ;;
		mariadb) v=$(docker run --rm --entrypoint /usr/sbin/mariadbd locklab/mariadb:building --version | sed -n 's/.*Ver \([0-9][0-9.]*\).*/\1/p') ;;
		memcached) v=$(docker run --rm --entrypoint /usr/bin/memcached locklab/memcached:building -V | sed -n 's/^memcached \([0-9][0-9.]*\).*/\1/p') ;;
		esac
		docker tag locklab/$image:building "locklab/$image:$v-r$REVISION"
		docker rmi locklab/$image:building >/dev/null
	done
	echo "docker/build.sh: built $(docker images --format '{{.Repository}}:{{.Tag}}' --filter reference='locklab/*' --filter label=locklab.revision=$REVISION | tr '\n' ' ')from Debian's packages"
	exit 0
}

# The build folders are named images.locklab.*, not locklab-*: a run of
# locklab removes the folders named locklab-* that no live process owns
# (cluster.SweepRunDirs), and a build that outlasts its minute of grace
# would lose its context under it and tag an image without its server.

# assert_context CONTEXT FILE...: each FILE is in the image's CONTEXT, or the
# build stops before it tags an image without it.
assert_context() {
	ctx=$1
	shift
	for f in "$@"; do
		[ -e "$ctx/root$f" ] || { echo "docker/build.sh: $f is missing from the image's context $ctx; not built" >&2; exit 1; }
	done
}

# copy_with_libs ROOT BINARY: BINARY and every library it links (ldd), at
# their own paths under ROOT, symlinks resolved.
copy_with_libs() {
	root=$1 bin=$2
	mkdir -p "$root$(dirname "$bin")"
	cp -L "$bin" "$root$bin"
	copy_libs "$root" "$bin"
}

# copy_libs ROOT BINARY: every library BINARY links (ldd), at its own path
# under ROOT, symlinks resolved.
copy_libs() {
	root=$1 bin=$2
	for lib in $(ldd "$bin" | awk '/=> \//{print $3} /^\t\/.*\(/{print $1}'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# common_files ROOT: what glibc wants to resolve names and users: /etc/hosts
# first (each container's own, which the docker backend writes), then DNS.
common_files() {
	root=$1
	mkdir -p "$root/etc" "$root/tmp" "$root/data"
	chmod 1777 "$root/tmp"
	echo 'hosts: files dns' >"$root/etc/nsswitch.conf"
	echo 'root:x:0:0:root:/root:/sbin/nologin' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
}

# check_image builds locklab/check (see the top) and prints its tag.
check_image() {
	# Its name is kept, not resolved: Debian's redis-server is a link to
	# redis-check-rdb, and redis-server chooses its part by the name it runs as.
	redis=
	[ -z "$REDIS_SERVER" ] || redis=$(command -v "$REDIS_SERVER" || true)
	case $redis in
	/*) ;;
	?*) redis=$PWD/$redis ;;
	esac
	if [ -z "$redis" ]; then
		echo "docker/build.sh: the check image is built from this machine's redis-server, and there is none (make deps, or set REDIS_SERVER); -debian does not build it" >&2
		exit 1
	fi
	# Unlike the backend's images, asked for by name: no daemon is a failure.
	if ! docker version >/dev/null 2>&1; then
		echo "docker/build.sh: no Docker daemon answers; locklab/check is not built" >&2
		exit 1
	fi
	arch=$(docker version -f '{{.Server.Arch}}')
	if [ "$(go env GOARCH)" != "$arch" ] || [ "$(go env GOOS)" != linux ]; then
		echo "docker/build.sh: the check image takes this machine's redis-server, which is $(go env GOOS)/$(go env GOARCH), not the daemon's linux/$arch" >&2
		exit 1
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/images.locklab.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
	ctx=$work/check
	mkdir -p "$ctx/root/usr/bin"
	# Built as go vet and the tests build, so that every package comes from
	# their build cache (a static -trimpath build compiled the whole tree
	# again: 2 to 4 min of CPU here); the libraries it links come along below.
	go build -o "$ctx/root/usr/bin/check" ./cmd/check
	hash=$(cat "$ctx/root/usr/bin/check" "$redis" | sha256sum | cut -c1-12)
	tag=locklab/check:$hash-r$CHECK_REVISION
	if docker image inspect "$tag" >/dev/null 2>&1; then
		echo "docker/build.sh: $tag exists" >&2
	else
		copy_with_libs "$ctx/root" "$redis"
		copy_libs "$ctx/root" "$ctx/root/usr/bin/check"
		[ "$redis" = /usr/bin/redis-server ] || cp -L "$redis" "$ctx/root/usr/bin/redis-server"
		# The replicated topology's Sentinels start through a shell script
		# (cluster/local: writeSentinelScript), which runs cat.
		copy_with_libs "$ctx/root" /bin/sh
		copy_with_libs "$ctx/root" /bin/cat
		common_files "$ctx/root"
		# The report folder; the Job mounts its volume here, and a plain
		# `docker run` without one still has somewhere to write.
		mkdir -p "$ctx/root/out"
		chmod 1777 "$ctx/root/out"
		# PATH, since a scratch image has none and the local backend finds
		# redis-server there.
		cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
ENV PATH=/usr/bin:/bin
WORKDIR /out
ENTRYPOINT ["/usr/bin/check"]
EOD
		docker build -q --label locklab.image=check --label locklab.revision=$CHECK_REVISION -t "$tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
		echo "docker/build.sh: built $tag" >&2
	fi
	docker tag "$tag" locklab/check:latest
	# Each change of check makes a new image: the older ones are removed, so
	# that running the tests again and again does not fill the disk.
	for old in $(docker images --format '{{.Repository}}:{{.Tag}}' --filter reference='locklab/check'); do
		case $old in "$tag" | locklab/check:latest) ;; *) docker rmi "$old" >/dev/null 2>&1 || true ;; esac
	done
	echo "$tag"
	exit 0
}

if [ "${1:-}" = "check" ]; then
	check_image
fi
if [ "${1:-}" = "-debian" ]; then
	debian_images
fi
if [ -z "$REDIS_SERVER" ] || [ -z "$MARIADBD" ] || [ -z "$INSTALL_DB" ]; then
	if [ "${1:-}" = "-tags" ]; then
		echo "docker/build.sh: -tags needs redis-server, mariadbd and mariadb-install-db on this machine" >&2
		exit 1
	fi
	echo "docker/build.sh: no redis-server, mariadbd or mariadb-install-db here: building the images from Debian's packages" >&2
	debian_images
fi
redis_version=$("$REDIS_SERVER" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
mariadb_version=$("$MARIADBD" --version | sed -n 's/.*Ver \([0-9][0-9.]*\).*/\1/p')
redis_tag=locklab/redis:$redis_version-r$REVISION
mariadb_tag=locklab/mariadb:$mariadb_version-r$REVISION
# PostgreSQL is optional: without it the docker backend skips the postgres
# topology's runs, saying so in one line.
postgres_tag=
if [ -n "$PG_BIN" ]; then
	postgres_version=$("$PG_BIN/postgres" --version | sed -n 's/.*PostgreSQL) \([0-9][0-9.]*\).*/\1/p')
	postgres_tag=locklab/postgres:$postgres_version-r$REVISION
fi
# etcd is optional too: its image holds etcd under locklab-init, which
# kills and restarts a member in place as it does redis-server.
ETCD=${ETCD:-$(command -v etcd || true)}
etcd_tag=
if [ -n "$ETCD" ]; then
	etcd_version=$("$ETCD" --version | sed -n 's/^etcd Version: \([0-9][0-9.]*\).*/\1/p')
	etcd_tag=locklab/etcd:$etcd_version-r$REVISION
fi
# ZooKeeper is optional too: its image holds Debian's zookeeper package
# (the server's jar and the jars its manifest names, in /usr/share/java)
# and the JRE that runs it here, under locklab-init. Its version is the
# one in the name Debian links to the jar.
ZOOKEEPER_JAR=${ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}
JAVA_BIN=$(readlink -f "$(command -v "${JAVA:-java}" || true)" 2>/dev/null || true)
zookeeper_tag=
if [ -f "$ZOOKEEPER_JAR" ] && [ -x "$JAVA_BIN" ]; then
	zookeeper_version=$(ls "$(dirname "$ZOOKEEPER_JAR")" | sed -n 's/^zookeeper-\([0-9][0-9.]*[0-9]\)\.jar$/\1/p' | head -1)
	zookeeper_tag=locklab/zookeeper:${zookeeper_version:-unknown}-r$REVISION
fi
# memcached is optional too: a single binary, under locklab-init as etcd is.
MEMCACHED=${MEMCACHED:-$(command -v memcached || true)}
memcached_tag=
if [ -n "$MEMCACHED" ]; then
	memcached_version=$("$MEMCACHED" -V | sed -n 's/^memcached \([0-9][0-9.]*\).*/\1/p')
	memcached_tag=locklab/memcached:${memcached_version:-unknown}-r$REVISION
fi
if [ "${1:-}" = "-tags" ]; then
	echo "$redis_tag $mariadb_tag${postgres_tag:+ $postgres_tag}${etcd_tag:+ $etcd_tag}${zookeeper_tag:+ $zookeeper_tag}${memcached_tag:+ $memcached_tag}"
	exit 0
fi
if ! docker version >/dev/null 2>&1; then
	echo "docker/build.sh: no Docker daemon answers; the docker backend's images are not built"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/images.locklab.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

if docker image inspect "$redis_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $redis_tag exists"
else
	ctx=$work/redis
	copy_with_libs "$ctx/root" "$REDIS_SERVER"
	mkdir -p "$ctx/root/usr/bin"
	[ "$REDIS_SERVER" = /usr/bin/redis-server ] || cp -L "$REDIS_SERVER" "$ctx/root/usr/bin/redis-server"
	common_files "$ctx/root"
	CGO_ENABLED=0 go build -trimpath -o "$ctx/root/usr/bin/locklab-init" ./docker/init
	assert_context "$ctx" /usr/bin/redis-server /usr/bin/locklab-init /etc/passwd
	cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
WORKDIR /data
ENTRYPOINT ["/usr/bin/locklab-init"]
EOD
	docker build -q --label locklab.image=redis --label locklab.revision=$REVISION -t "$redis_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $redis_tag"
fi

if docker image inspect "$mariadb_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $mariadb_tag exists"
else
	ctx=$work/mariadb
	copy_with_libs "$ctx/root" "$MARIADBD"
	mkdir -p "$ctx/root/usr/sbin"
	[ "$MARIADBD" = /usr/sbin/mariadbd ] || cp -L "$MARIADBD" "$ctx/root/usr/sbin/mariadbd"
	common_files "$ctx/root"
	mkdir -p "$ctx/root/usr/share/mysql"
	# The error messages and character sets; the SQL scripts are for the
	# bootstrap below, which runs here, not in the image.
	cp -R "$SHARE/english" "$SHARE/charsets" "$ctx/root/usr/share/mysql/"
	# The data directory is made once, here, and baked into the image, so a
	# container starts in a second with no init step. The InnoDB settings
	# must match the server's (cluster/internal/backendkit: MariaDBInnoDBArgs).
	data=$ctx/root/var/lib/locklab
	mkdir -p "$data" "$work/tmp"
	user=
	[ "$(id -u)" = 0 ] && user=-uroot
	"$INSTALL_DB" --no-defaults --datadir="$data" --tmpdir="$work/tmp" \
		--auth-root-authentication-method=normal --skip-test-db --force $user \
		--innodb-buffer-pool-size=16M --innodb-log-file-size=8M \
		--innodb-flush-log-at-trx-commit=2 --skip-innodb-doublewrite --skip-log-bin \
		>"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; exit 1; }
	# Clients come through the published port, from the bridge's gateway, not
	# from localhost: root may connect from anywhere, with no password, as the
	# local backend's root does on loopback.
	# The bootstrap runs without grant tables, so the row is copied, not granted.
	echo "INSERT INTO mysql.global_priv SELECT '%', User, Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost';" |
		"$MARIADBD" --no-defaults --bootstrap --datadir="$data" --tmpdir="$work/tmp" $user \
			--innodb-buffer-pool-size=16M --innodb-log-file-size=8M --skip-log-bin \
			>>"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; exit 1; }
	assert_context "$ctx" /usr/sbin/mariadbd /usr/share/mysql/charsets /var/lib/locklab/mysql /etc/passwd
	cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
WORKDIR /var/lib/locklab
ENTRYPOINT ["/usr/sbin/mariadbd", "--no-defaults", "--user=root", "--datadir=/var/lib/locklab", "--tmpdir=/tmp", "--lc-messages-dir=/usr/share/mysql", "--character-sets-dir=/usr/share/mysql/charsets", "--bind-address=0.0.0.0", "--port=3306", "--skip-name-resolve", "--socket=/tmp/mysqld.sock"]
EOD
	docker build -q --label locklab.image=mariadb --label locklab.revision=$REVISION -t "$mariadb_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $mariadb_tag"
fi

if [ -z "$postgres_tag" ]; then
	echo "docker/build.sh: no PostgreSQL here (make deps installs it): locklab/postgres is not built, and the docker backend skips the postgres topology"
elif docker image inspect "$postgres_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $postgres_tag exists"
else
	ctx=$work/postgres
	copy_with_libs "$ctx/root" "$PG_BIN/postgres"
	common_files "$ctx/root"
	# PostgreSQL refuses to run as root: the image's user postgres runs it.
	echo 'postgres:x:999:999:postgres:/var/lib/locklab:/sbin/nologin' >>"$ctx/root/etc/passwd"
	echo 'postgres:x:999:' >>"$ctx/root/etc/group"
	# Its modules (no JIT: the server runs with jit=off), its share directory
	# (time zone sets) and the time zones, at the paths the binary looks in.
	libdir=$("$PG_BIN/pg_config" --pkglibdir 2>/dev/null || echo "$(dirname "$PG_BIN")/lib")
	sharedir=$("$PG_BIN/pg_config" --sharedir 2>/dev/null || echo "/usr/share/postgresql/$(basename "$(dirname "$PG_BIN")")")
	mkdir -p "$ctx/root$libdir" "$ctx/root$(dirname "$sharedir")" "$ctx/root/usr/share"
	find "$libdir" -maxdepth 1 -name '*.so' ! -name 'llvmjit*' -exec cp -L {} "$ctx/root$libdir/" \;
	cp -R "$sharedir" "$ctx/root$sharedir"
	cp -R /usr/share/zoneinfo "$ctx/root/usr/share/zoneinfo"
	# The cluster is made once, here, and baked into the image, as MariaDB's
	# data directory is: clients come from the bridge's gateway, so every
	# address may connect with no password, as on the local backend's loopback.
	chmod 755 "$work"
	mkdir -p "$work/pgdata"
	initdb_as=
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$work/pgdata" 2>/dev/null && initdb_as="setpriv --reuid=postgres --regid=postgres --clear-groups" ||
			{ chown nobody "$work/pgdata" && initdb_as="setpriv --reuid=nobody --regid=nogroup --clear-groups"; }
	fi
	LC_ALL=C $initdb_as "$PG_BIN/initdb" -D "$work/pgdata/data" -A trust -U postgres --no-sync --no-instructions -E UTF8 --locale=C \
		>"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; exit 1; }
	echo 'host all all all trust' >>"$work/pgdata/data/pg_hba.conf"
	# A directory of its own around it, so that COPY keeps its mode (0700,
	# which postgres insists on) rather than making the target anew.
	mkdir -p "$ctx/pg"
	mv "$work/pgdata/data" "$ctx/pg/locklab"
	bindir=$PG_BIN
	assert_context "$ctx" "$bindir/postgres" /etc/passwd
	[ -e "$ctx/pg/locklab/PG_VERSION" ] || { echo "docker/build.sh: the PostgreSQL data directory is missing from $ctx; not built" >&2; exit 1; }
	cat >"$ctx/Dockerfile" <<EOD
FROM scratch
COPY root/ /
COPY --chown=999:999 pg/ /var/lib/
USER 999:999
WORKDIR /var/lib/locklab
ENTRYPOINT ["$bindir/postgres", "-D", "/var/lib/locklab", "-c", "listen_addresses=*", "-c", "port=5432", "-c", "unix_socket_directories=", "-c", "jit=off"]
EOD
	docker build -q --label locklab.image=postgres --label locklab.revision=$REVISION -t "$postgres_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $postgres_tag"
fi

if [ -n "$etcd_tag" ] && docker image inspect "$etcd_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $etcd_tag exists"
elif [ -n "$etcd_tag" ]; then
	ctx=$work/etcd
	copy_with_libs "$ctx/root" "$ETCD"
	mkdir -p "$ctx/root/usr/bin"
	[ "$ETCD" = /usr/bin/etcd ] || cp -L "$ETCD" "$ctx/root/usr/bin/etcd"
	common_files "$ctx/root"
	CGO_ENABLED=0 go build -trimpath -o "$ctx/root/usr/bin/locklab-init" ./docker/init
	assert_context "$ctx" /usr/bin/etcd /usr/bin/locklab-init /etc/passwd
	cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
WORKDIR /data
ENTRYPOINT ["/usr/bin/locklab-init"]
EOD
	docker build -q --label locklab.image=etcd --label locklab.revision=$REVISION -t "$etcd_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $etcd_tag"
fi

if [ -z "$zookeeper_tag" ]; then
	echo "docker/build.sh: no ZooKeeper or no Java here (make deps installs them): locklab/zookeeper is not built, and the docker backend skips the zookeeper topology"
elif docker image inspect "$zookeeper_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $zookeeper_tag exists"
else
	ctx=$work/zookeeper
	# The whole JRE at its own path (the JVM finds its home from its binary),
	# its configuration in /etc, and the libraries its binary and modules
	# link; /usr/bin/java is what the docker backend runs.
	jhome=$(dirname "$(dirname "$JAVA_BIN")")
	mkdir -p "$ctx/root$(dirname "$jhome")" "$ctx/root/usr/bin" "$ctx/root/usr/share/java"
	cp -a "$jhome" "$ctx/root$jhome"
	rm -rf "$ctx/root$jhome/jmods" "$ctx/root$jhome/include" "$ctx/root$jhome/man" "$ctx/root$jhome/lib/src.zip"
	mkdir -p "$ctx/root/etc"
	for etc in /etc/java-*; do
		if [ -d "$etc" ]; then cp -a "$etc" "$ctx/root/etc/"; fi
	done
	for so in "$JAVA_BIN" $(find "$jhome/lib" -name '*.so' -type f); do
		for lib in $(ldd "$so" 2>/dev/null | awk '/=> \//{print $3} /^\t\/.*\(/{print $1}'); do
			[ -e "$ctx/root$lib" ] && continue
			mkdir -p "$ctx/root$(dirname "$lib")"
			cp -L "$lib" "$ctx/root$lib"
		done
	done
	ln -sf "$JAVA_BIN" "$ctx/root/usr/bin/java"
	# libfaketime, where installed, at a fixed path the docker backend
	# preloads into the JVM, so that a server's wall clock can jump
	# (fault.ClockJumpServer); without it such a run is unknown. The
	# thread-safe build where there is one: the other now and then gives a
	# thread the clock without the offset (proc.Libfaketime says more).
	faketime=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 \
		/usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 2>/dev/null | head -1 || true)
	if [ -n "$faketime" ]; then
		mkdir -p "$ctx/root/usr/lib/locklab"
		cp -L "$faketime" "$ctx/root/usr/lib/locklab/libfaketime.so.1"
	fi
	# The jars, links and all: the server's manifest names them by path.
	cp -a "$(dirname "$ZOOKEEPER_JAR")/." "$ctx/root/usr/share/java/"
	[ "$ZOOKEEPER_JAR" = /usr/share/java/zookeeper.jar ] || cp -L "$ZOOKEEPER_JAR" "$ctx/root/usr/share/java/zookeeper.jar"
	common_files "$ctx/root"
	CGO_ENABLED=0 go build -trimpath -o "$ctx/root/usr/bin/locklab-init" ./docker/init
	assert_context "$ctx" "$JAVA_BIN" /usr/share/java/zookeeper.jar /usr/bin/locklab-init /etc/passwd
	cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
WORKDIR /data
ENTRYPOINT ["/usr/bin/locklab-init"]
EOD
	docker build -q --label locklab.image=zookeeper --label locklab.revision=$REVISION -t "$zookeeper_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $zookeeper_tag"
fi

if [ -z "$memcached_tag" ]; then
	echo "docker/build.sh: no memcached here (make deps installs it): locklab/memcached is not built, and the docker backend skips the memcached topology"
elif docker image inspect "$memcached_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $memcached_tag exists"
else
	ctx=$work/memcached
	copy_with_libs "$ctx/root" "$MEMCACHED"
	mkdir -p "$ctx/root/usr/bin"
	[ "$MEMCACHED" = /usr/bin/memcached ] || cp -L "$MEMCACHED" "$ctx/root/usr/bin/memcached"
	# /etc/passwd holds root, whom memcached -u root looks up.
	common_files "$ctx/root"
	CGO_ENABLED=0 go build -trimpath -o "$ctx/root/usr/bin/locklab-init" ./docker/init
	assert_context "$ctx" /usr/bin/memcached /usr/bin/locklab-init /etc/passwd
	cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
WORKDIR /data
ENTRYPOINT ["/usr/bin/locklab-init"]
EOD
	docker build -q --label locklab.image=memcached --label locklab.revision=$REVISION -t "$memcached_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $memcached_tag"
fi
