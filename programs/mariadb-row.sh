#!/bin/sh
# A lock program for the mariadb topology, in sh with the mariadb client:
# seed 001's unique row (the row-cleanup lock): INSERT a row named by the
# key with an expiry in the server's clock, after deleting an expired one;
# DELETE it by owner to release. It reads the server from LOCKLAB_MYSQL
# (mysql://USER[:PASSWORD]@HOST:PORT/locklab) and speaks locklab's line
# protocol on stdin and stdout; each request runs one mariadb process.
#
#   go run ./cmd/check -lock exec:'sh programs/mariadb-row.sh' -topology mariadb
set -u
rest=${LOCKLAB_MYSQL#mysql://}
user=${rest%%@*}
rest=${rest#*@}
hostport=${rest%%/*}
pass=
case $user in *:*) pass=${user#*:}; user=${user%%:*} ;; esac
host=${hostport%:*}
port=${hostport##*:}
ttl_us=$((LOCKLAB_TTL_MS * 1000))
n=0

sql() {
	MYSQL_PWD=$pass mariadb --protocol=TCP -h "$host" -P "$port" -u "$user" -N -B -e "$1" 2>&1
}

while read -r cmd key; do
	case $cmd in
	acquire)
		n=$((n + 1))
		owner="c$LOCKLAB_CLIENT-$n"
		if out=$(sql "DELETE FROM locklab.locks WHERE name = '$key' AND expires_at < NOW(3);
			INSERT INTO locklab.locks (name, owner, expires_at) VALUES ('$key', '$owner', NOW(3) + INTERVAL $ttl_us MICROSECOND)"); then
			echo ok
		else
			case $out in
			*"Duplicate entry"*) echo refused ;;
			*) echo "error $(echo "$out" | tr '\n' ' ')" ;;
			esac
		fi
		;;
	release)
		if out=$(sql "DELETE FROM locklab.locks WHERE name = '$key' AND owner = '$owner'; SELECT ROW_COUNT()"); then
			if [ "$out" = 1 ]; then echo ok; else echo not-held; fi
		else
			echo "error $(echo "$out" | tr '\n' ' ')"
		fi
		;;
	reset) # between two runs on one warm deployment: forget the row held
		owner=
		echo ok
		;;
	*) echo "error unknown request $cmd" ;;
	esac
done
