package scenarios_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// BenchmarkSQLLockCost is what each way of guarding the MariaDB stock
// costs under contention (contention-sql-tx: four clients, 10 ms critical
// sections, 1.5 s): sales made per second of the workload, and per sale,
// the critical sections whose write was rejected (the optimistic lock's
// price: work thrown away) and the acquires refused (a lock's price:
// waiting). Run it with -bench SQLLockCost -benchtime 1x.
func BenchmarkSQLLockCost(b *testing.B) {
	s, err := scenarios.Lookup("contention-sql-tx")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"optimistic", "for-update-tx", "get-lock-tx", "unique-row"} {
		b.Run(name, func(b *testing.B) {
			l, err := locks.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			var sales, rejected, refused int
			for range b.N {
				dir := b.TempDir()
				if _, err := runner.Run(context.Background(), s, l.New, runner.Options{Seed: 1, Dir: dir, ReferenceRuns: -1}); err != nil {
					b.Fatal(err)
				}
				ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
				if err != nil {
					b.Fatal(err)
				}
				for _, op := range ops {
					switch {
					case op.Kind == history.KindSection && op.Result == models.Wrote:
						sales++
					case op.Kind == history.KindSection && op.Result == models.Rejected:
						rejected++
					case op.Kind == history.KindAcquire && op.Outcome == models.Failed && !op.Probe:
						refused++
					}
				}
			}
			per := func(n int) float64 { return float64(n) / float64(max(sales, 1)) }
			b.ReportMetric(float64(sales)/float64(b.N)/s.Workload.Duration.Seconds(), "sales/s")
			b.ReportMetric(per(rejected), "rejected/sale")
			b.ReportMetric(per(refused), "refused/sale")
		})
	}
}
