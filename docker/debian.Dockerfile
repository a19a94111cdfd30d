# The images of docker/build.sh for a machine that has Docker but no
# redis-server or mariadbd of its own (macOS with Docker Desktop, say): the
# same layout as the FROM scratch images, from Debian's packages: targets
# redis, mariadb and memcached.
# docker/build.sh -debian builds it, with locklab-init in the context.
FROM debian:bookworm-slim AS debian
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server mariadb-server \
	&& rm -rf /var/lib/apt/lists/*
# MariaDB's data directory, made once and baked in as in the scratch image:
# root may connect from anywhere with no password (the published port
# comes from the bridge's gateway). The InnoDB settings must match the
# server's (cluster/internal/backendkit: MariaDBInnoDBArgs).
RUN mkdir -p /var/lib/locklab /tmp/install \
	&& mariadb-install-db --no-defaults --datadir=/var/lib/locklab --tmpdir=/tmp/install \
		--auth-root-authentication-method=normal --skip-test-db --force -uroot \
		--innodb-buffer-pool-size=16M --innodb-log-file-size=8M \
		--innodb-flush-log-at-trx-commit=2 --skip-innodb-doublewrite --skip-log-bin >/tmp/install/log 2>&1 \
	&& echo "INSERT INTO mysql.global_priv SELECT '%', User, Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost';" \
		| mariadbd --no-defaults --bootstrap --datadir=/var/lib/locklab --tmpdir=/tmp/install -uroot \
			--innodb-buffer-pool-size=16M --innodb-log-file-size=8M --skip-log-bin >>/tmp/install/log 2>&1 \
	&& rm -rf /tmp/install

FROM debian AS redis
COPY locklab-init /usr/bin/locklab-init
RUN mkdir -p /data
WORKDIR /data
ENTRYPOINT ["/usr/bin/locklab-init"]

FROM debian AS mariadb
WORKDIR /var/lib/locklab
ENTRYPOINT ["/usr/sbin/mariadbd", "--no-defaults", "--user=root", "--datadir=/var/lib/locklab", "--tmpdir=/tmp", "--lc-messages-dir=/usr/share/mysql", "--character-sets-dir=/usr/share/mysql/charsets", "--bind-address=0.0.0.0", "--port=3306", "--skip-name-resolve", "--socket=/tmp/mysqld.sock"]

# memcached apart from the stage above, which the Redis and MariaDB images
# share: its own package only, under locklab-init as in the scratch image.
FROM debian:bookworm-slim AS memcached
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends memcached \
	&& rm -rf /var/lib/apt/lists/*
COPY locklab-init /usr/bin/locklab-init
RUN mkdir -p /data
WORKDIR /data
ENTRYPOINT ["/usr/bin/locklab-init"]
