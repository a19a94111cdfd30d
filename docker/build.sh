#!/bin/sh
# Builds locklab's container images without any registry: each image is a
# FROM scratch context assembled from this machine's own redis-server and
# mariadbd (the Debian packages `make deps` installs) and the shared libraries
# they link. Tags carry the server versions: locklab/redis:<v>, locklab/mariadb:<v>.
# The Redis image runs redis-server under locklab-init (docker/init), built
# here with Go, which crashes and restarts it in place in milliseconds. The
# tags also carry the revision of what locklab adds (REVISION): bump it when
# docker/init or this script changes what goes into an image.
# An image whose tag exists is not built again. Where no Docker daemon answers,
# it says so in one line and exits 0, so that `make test` works anywhere.
#
# A machine without those servers (macOS with Docker Desktop, say) gets the
# same images from Debian's packages instead (docker/debian.Dockerfile, FROM
# debian:bookworm-slim, so it needs a registry or that image loaded).
#
# Usage: docker/build.sh          build what is missing
#        docker/build.sh -debian  build what is missing from Debian's packages
#        docker/build.sh -tags    print the two tags and exit
set -eu
cd "$(dirname "$0")/.."
REVISION=2

REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
MARIADBD=${MARIADBD:-$(command -v mariadbd || ls /usr/sbin/mariadbd 2>/dev/null || true)}
INSTALL_DB=${INSTALL_DB:-$(command -v mariadb-install-db || command -v mysql_install_db || true)}
SHARE=${MARIADB_SHARE:-/usr/share/mysql}

# have_image REPO: an image of REPO at this revision exists, whatever its tag.
have_image() {
	[ -n "$(docker images -q --filter "reference=$1" --filter "label=locklab.revision=$REVISION")" ]
}

# debian_images builds both images from docker/debian.Dockerfile and tags
# them with the versions of the servers they hold.
debian_images() {
	if ! docker version >/dev/null 2>&1; then
		echo "docker/build.sh: no Docker daemon answers; the docker backend's images are not built"
		exit 0
	fi
	if have_image locklab/redis && have_image locklab/mariadb; then
		echo "docker/build.sh: locklab/redis and locklab/mariadb of revision $REVISION exist"
		exit 0
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/locklab-images.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
	arch=$(docker version -f '{{.Server.Arch}}')
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -o "$work/locklab-init" ./docker/init
	cp docker/debian.Dockerfile "$work/Dockerfile"
	for image in redis mariadb; do
		# The host's network: a build may need a proxy or a mirror the host knows.
		docker build -q --network host --target $image --label locklab.image=$image --label locklab.revision=$REVISION \
			-t locklab/$image:building "$work" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	done
	v=$(docker run --rm --entrypoint /usr/bin/redis-server locklab/redis:building --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
	docker tag locklab/redis:building "locklab/redis:$v-r$REVISION"
	v=$(docker run --rm --entrypoint /usr/sbin/mariadbd locklab/mariadb:building --version | sed -n 's/.*Ver \([0-9][0-9.]*\).*/\1/p')
	docker tag locklab/mariadb:building "locklab/mariadb:$v-r$REVISION"
	docker rmi locklab/redis:building locklab/mariadb:building >/dev/null
	echo "docker/build.sh: built $(docker images --format '{{.Repository}}:{{.Tag}}' --filter reference='locklab/*' --filter label=locklab.revision=$REVISION | tr '\n' ' ')from Debian's packages"
	exit 0
}

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
if [ "${1:-}" = "-tags" ]; then
	echo "$redis_tag $mariadb_tag"
	exit 0
fi
if ! docker version >/dev/null 2>&1; then
	echo "docker/build.sh: no Docker daemon answers; the docker backend's images are not built"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/locklab-images.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# copy_with_libs ROOT BINARY: BINARY and every library it links (ldd), at
# their own paths under ROOT, symlinks resolved.
copy_with_libs() {
	root=$1 bin=$2
	mkdir -p "$root$(dirname "$bin")"
	cp -L "$bin" "$root$bin"
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

if docker image inspect "$redis_tag" >/dev/null 2>&1; then
	echo "docker/build.sh: $redis_tag exists"
else
	ctx=$work/redis
	copy_with_libs "$ctx/root" "$REDIS_SERVER"
	mkdir -p "$ctx/root/usr/bin"
	[ "$REDIS_SERVER" = /usr/bin/redis-server ] || cp -L "$REDIS_SERVER" "$ctx/root/usr/bin/redis-server"
	common_files "$ctx/root"
	CGO_ENABLED=0 go build -trimpath -o "$ctx/root/usr/bin/locklab-init" ./docker/init
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
	cat >"$ctx/Dockerfile" <<'EOD'
FROM scratch
COPY root/ /
WORKDIR /var/lib/locklab
ENTRYPOINT ["/usr/sbin/mariadbd", "--no-defaults", "--user=root", "--datadir=/var/lib/locklab", "--tmpdir=/tmp", "--lc-messages-dir=/usr/share/mysql", "--character-sets-dir=/usr/share/mysql/charsets", "--bind-address=0.0.0.0", "--port=3306", "--skip-name-resolve", "--socket=/tmp/mysqld.sock"]
EOD
	docker build -q --label locklab.image=mariadb --label locklab.revision=$REVISION -t "$mariadb_tag" "$ctx" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
	echo "docker/build.sh: built $mariadb_tag"
fi
