#!/bin/bash
# A lock program for the postgres topology: seed 001's unique-row lock with
# an expiry and the cleanup, spoken to over locklab's line protocol, one psql
# per request through LOCKLAB_POSTGRES (the client's own link to the server).
# No watchdog: a critical section longer than LOCKLAB_TTL_MS loses the row.
#   go run ./cmd/check -lock exec:'programs/pgrow.sh' -topology postgres
if [ -z "${LOCKLAB_POSTGRES:-}" ]; then
	echo "pgrow.sh: LOCKLAB_POSTGRES is not set: run it on topology postgres" >&2
	exit 2
fi
n=0
declare -A mine
# sql runs statements, printing what they return, one line, or "error TEXT".
sql() {
	local out
	if ! out=$(psql "$LOCKLAB_POSTGRES" -qtAX -v ON_ERROR_STOP=1 "$@" 2>&1); then
		echo "error ${out//$'\n'/ }"
		return 1
	fi
	echo "$out"
}
while read -r verb key; do
	# Keys are locklab's own ("lock", "locklab-warm-up"); quote them all the same.
	q=${key//\'/\'\'}
	case $verb in
	acquire)
		n=$((n + 1))
		owner="c${LOCKLAB_CLIENT}-$n"
		out=$(sql -c "DELETE FROM locklab.locks WHERE name = '$q' AND expires_at < now()" \
			-c "INSERT INTO locklab.locks (name, owner, expires_at) VALUES ('$q', '$owner', now() + interval '$LOCKLAB_TTL_MS milliseconds') ON CONFLICT (name) DO NOTHING RETURNING id") || { echo "$out"; continue; }
		if [ -n "$out" ]; then
			mine[$key]=$owner
			echo ok
		else
			echo refused
		fi
		;;
	release)
		owner=${mine[$key]:-none}
		unset "mine[$key]"
		out=$(sql -c "DELETE FROM locklab.locks WHERE name = '$q' AND owner = '$owner' RETURNING id") || { echo "$out"; continue; }
		if [ -n "$out" ]; then echo ok; else echo not-held; fi
		;;
	reset) # between two runs on one warm deployment: forget the rows held
		mine=()
		echo ok
		;;
	*) echo "error unknown request $verb" ;;
	esac
done
