# locklab: the two commands a user needs are `make check` and `make test`.
.PHONY: deps check readme test test-short bench vet docker acceptance image

# -trimpath keeps each package's folder out of the build cache's keys, so a
# clone of this tree elsewhere (CI's clean clone) reuses what this machine
# compiled already instead of compiling every locklab package again.
export GOFLAGS += -trimpath

# Where `make check` runs the servers: local (processes) or docker (containers).
BACKEND ?= local

deps:
	@scripts/deps.sh

# Runs the whole catalogue and writes locklab-report/.
check: deps $(if $(filter docker,$(BACKEND)),docker)
	go run ./cmd/check -backend $(BACKEND)

# Writes one make check's output into README.md's table (TestReadmeTable
# fails when they differ from the catalogue).
readme: deps $(if $(filter docker,$(BACKEND)),docker)
	BACKEND=$(BACKEND) scripts/readme-table.sh

# Builds the docker backend's images from this machine's redis-server,
# mariadbd, postgres, etcd and ZooKeeper (with its JRE), offline; skips those built already, and says so in one line
# where no Docker daemon answers.
docker: deps
	@docker/build.sh

# The image `check explore` runs in on Kubernetes (docker/k8s/, docs/docker.md:
# "Exploring on Kubernetes"), built offline from this tree's check and this
# machine's redis-server; prints its tag. Not part of `make test`, whose
# TestK8sImage builds it itself.
image: deps
	@docker/build.sh check

# The packages whose tests run scenarios against real clocks, one package
# at a time and four tests at a time (as the honesty runs under two `yes`
# were made; a pitfall case that misses its verdicts is made again alone;
# a scenario test's run the machine stalled is made again); every other package
# (whatever `go list` finds, so a new one cannot be left out) runs with the
# race detector.
TIMED := pitfalls scenarios libraries explore
TIMED_PKGS = $(patsubst %,./%/,$(TIMED))
OTHER_PKGS = $(filter-out $(patsubst %,github.com/locklab/locklab/%,$(TIMED)),$(shell go list ./...))
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Formatting, go vet and staticcheck (pinned; fetched from the Go module
# proxy on first use).
vet:
	@test -z "$$(gofmt -l .)" || { echo "gofmt -l: these files need gofmt:"; gofmt -l .; exit 1; }
	go vet ./...
	go run $(STATICCHECK) ./...

# The whole test suite: vet, unit tests (with the race detector where timing
# does not matter), and every pitfall's broken and fixed lock. -vet=off: the
# vet target has run every analyser already, and go test's own vet pass
# analyses every dependency again (about 2 min of CPU). The two kinds run
# one after the other: side by side (make -j2) they loaded the machine so
# that the race-detector tests that run scenarios themselves (cmd/check's)
# got runs the machine stalled, even when made again.
test: deps docker vet
	go test -count=1 -vet=off -race $(OTHER_PKGS)
	go test -count=1 -vet=off -p 1 -timeout 20m -parallel 4 ./pitfalls/
	go test -count=1 -vet=off -p 1 -timeout 20m -parallel 4 $(filter-out ./pitfalls/,$(TIMED_PKGS))

# The inner loop: every package's unit tests and one run per lock service
# (scenarios' TestOneRunPerService), on local processes. Under -short the
# catalogue, the scenario runs and the docker backend's tests are left out
# (each package's TestMain says which), and so are the race detector and
# vet. `make test` stays the whole suite, and CI's command.
test-short: deps
	go test -short -count=1 -vet=off ./...

# Acceptance: the blind Redlock that ignores its elapsed time found, and
# ten minutes of explore on each correct lock of the redlock topology, and
# on the watchdog and reentrant locks; each must find no bug of its own
# (exit 0). Bare redsync is not one: it never renews, so a critical section
# longer than its lease is its own bug, which explore finds.
acceptance: deps
	LOCKLAB_ACCEPTANCE=1 go test -count=1 -run 'TestExploreFindsBlindLocks/slow-redlock' -timeout 5m ./scenarios/
	for l in redlock redsync-refresh fenced-redlock; do go run ./cmd/check explore -lock $$l -topology redlock -time 10m || exit 1; done
	for l in token-watchdog reentrant; do go run ./cmd/check explore -lock $$l -time 10m || exit 1; done

# Speed goals: the lock cycle, porcupine, start-up, and the whole catalogue.
bench: deps
	go test -run '^$$' -bench . -benchtime 20x ./network/ ./cluster/... ./harness/ ./models/
	go test -run '^$$' -bench LockCycle -benchtime 300x ./locks/
	go test -run '^$$' -bench Catalogue -benchtime 1x ./cmd/check/
	go test -run '^$$' -bench ExploreRuns -benchtime 24x ./explore/
	go test -run '^$$' -bench FirstOwn -benchtime 3x -timeout 60m ./explore/
