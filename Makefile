# locklab: the two commands a user needs are `make check` and `make test`.
.PHONY: deps check test bench vet

deps:
	@scripts/deps.sh

# Runs the whole catalogue and writes locklab-report/.
check: deps
	go run ./cmd/check

# The whole test suite: vet, unit tests (with the race detector where timing
# does not matter), and every pitfall's broken and fixed lock, one package at
# a time because scenarios are timed against real clocks.
test: deps
	go vet ./...
	go test -count=1 -race ./models/ ./history/ ./check/ ./network/ ./cluster/ ./harness/ ./locks/ ./program/ ./timeline/ ./reports/ ./cmd/...
	go test -count=1 -p 1 -timeout 20m ./pitfalls/ ./scenarios/ ./libraries/ ./explore/

# Speed goals: the lock cycle, porcupine, start-up, and the whole catalogue.
bench: deps
	go test -run '^$$' -bench . -benchtime 20x ./network/ ./cluster/ ./harness/ ./models/
	go test -run '^$$' -bench Catalogue -benchtime 1x ./cmd/check/
	go test -run '^$$' -bench . -benchtime 3x -timeout 60m ./explore/
