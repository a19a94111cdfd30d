package docker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
)

const (
	dockerPostgresRepo = "locklab/postgres"
	dockerPostgresPort = 5432
)

// StartPostgres starts PostgreSQL in a container from the image, whose
// cluster initdb made when the image was built (docker/build.sh), and
// returns once it answers. Without the image it says so in one line
// wrapping cluster.ErrNoPostgres, so that the run is skipped.
func (r *dockerRun) StartPostgres(ctx context.Context, _ string) (cluster.Database, error) {
	image, err := r.docker.image(r.pool, r.docker.PostgresImage, dockerPostgresRepo)
	if err != nil {
		return nil, fmt.Errorf("%w on the docker backend: %v", cluster.ErrNoPostgres, err)
	}
	var args []string
	for _, set := range backendkit.PostgresSettings() {
		args = append(args, "-c", set)
	}
	n := &dockerNode{run: r, name: "postgres", image: image, port: dockerPostgresPort, cmd: args, noVolume: true}
	if err := r.createNode(ctx, n); errors.Is(err, errNameTaken) {
		return nil, errors.New("start postgres: one runs already")
	} else if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	p := &dockerPostgres{node: n, dsn: (&url.URL{Scheme: "postgres", User: url.User("postgres"), Host: n.addr, Path: "/postgres", RawQuery: "sslmode=disable"}).String()}
	cfg, err := pgx.ParseConfig(p.dsn)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start postgres: %w", err), n.Stop())
	}
	cfg.ConnectTimeout = backendkit.SQLDialTimeout
	p.db = stdlib.OpenDB(*cfg)
	sctx, cancel := context.WithTimeout(ctx, backendkit.MariaDBStartCap)
	defer cancel()
	// Until postgres listens, the published port accepts and closes at once.
	err = backendkit.PollUntil(sctx, "await postgres", func(ctx context.Context) (string, error) {
		if err := p.db.PingContext(ctx); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start postgres: %w; log tail:\n%s", err, n.logTail()), p.Stop())
	}
	return p, nil
}

// dockerPostgres is PostgreSQL in a container of a docker run.
type dockerPostgres struct {
	node *dockerNode
	dsn  string
	db   *sql.DB
}

// Driver is "pgx": DSN is for github.com/jackc/pgx/v5/stdlib.
func (p *dockerPostgres) Driver() string { return "pgx" }

// DSN is the superuser over TCP to the published port, without TLS.
func (p *dockerPostgres) DSN() string { return p.dsn }

// Admin is a pool as the superuser, for the harness's own use.
func (p *dockerPostgres) Admin() *sql.DB { return p.db }

// Pid is the container's first process (cluster.ServerProcess).
func (p *dockerPostgres) Pid() int { return p.node.Pid() }

// SetupInventory creates the inventory row, as the local PostgreSQL does.
func (p *dockerPostgres) SetupInventory(ctx context.Context, stock int64) error {
	return backendkit.SetupPostgresInventory(ctx, p.db, stock)
}

// Stock reads the committed stock, as the local PostgreSQL does.
func (p *dockerPostgres) Stock(ctx context.Context) (int64, error) {
	return backendkit.Stock(ctx, p.db)
}

// Stop removes the container and closes the pool; it may be called twice.
func (p *dockerPostgres) Stop() error {
	err := p.node.Stop()
	_ = p.db.Close() // after the container: Close waits for queries in flight
	return err
}
