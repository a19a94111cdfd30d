package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrNoRedisServer means no usable redis-server binary was found.
// RedisServerPath wraps it, so callers can tell a missing dependency from a failed run.
var ErrNoRedisServer = errors.New("redis-server not found")

// RedisServerPath returns the redis-server binary to run: $REDIS_SERVER when set,
// else the one on PATH. The error says how to install one.
func RedisServerPath() (string, error) {
	if p := os.Getenv("REDIS_SERVER"); p != "" {
		// LookPath checks a path with a slash directly and searches PATH for a bare name.
		path, err := exec.LookPath(p)
		if err != nil {
			why := "is not an executable file"
			if errors.Is(err, fs.ErrNotExist) {
				why = "does not exist"
			}
			return "", fmt.Errorf("%w: REDIS_SERVER=%s %s", ErrNoRedisServer, p, why)
		}
		// The node runs redis-server with its own directory as working directory,
		// where a relative path would mean something else.
		return filepath.Abs(path)
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("%w: run `make deps` (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis) or set REDIS_SERVER", ErrNoRedisServer)
	}
	return filepath.Abs(path)
}
