package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// dataTemplates are the data directories this process's servers made with
// their setup program (initdb, mariadb-install-db), in memory, by the
// program's path: a later start writes one out (tens of MB, tens of ms)
// instead of running the program again (half a second to three seconds,
// and a second of CPU for MariaDB's bootstrap). Memory, not a directory,
// so that nothing outlives the process.
var dataTemplates = struct {
	sync.Mutex
	byProgram map[string][]templateFile
}{byProgram: map[string][]templateFile{}}

// templateFile is a directory or a file of a data directory, by its path in it.
type templateFile struct {
	rel  string
	mode os.FileMode
	data []byte // nil for a directory
}

// makeDataDir makes the empty data directory dir: written out from this
// process's template of program, or made by create (which runs program),
// whose result then becomes the template. The lock is held across create,
// so that starts at once wait for the first one's template rather than
// each running the program. cred, when not nil, owns what is written.
func makeDataDir(ctx context.Context, program, dir string, cred *syscall.Credential, create func(context.Context) error) error {
	dataTemplates.Lock()
	defer dataTemplates.Unlock()
	if files, ok := dataTemplates.byProgram[program]; ok {
		return writeTemplate(dir, files, cred)
	}
	if err := create(ctx); err != nil {
		return err
	}
	files, err := readTemplate(dir)
	if err != nil {
		return err
	}
	dataTemplates.byProgram[program] = files
	return nil
}

// readTemplate reads the data directory dir into memory.
func readTemplate(dir string) ([]templateFile, error) {
	var files []templateFile
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := templateFile{rel: rel, mode: info.Mode()}
		switch {
		case d.IsDir():
		case info.Mode().IsRegular():
			if f.data, err = os.ReadFile(path); err != nil {
				return err
			}
		default:
			return fmt.Errorf("template: %s is neither a file nor a directory", path)
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the data directory as a template: %w", err)
	}
	return files, nil
}

// writeTemplate writes files out as the data directory dir, owned by whom
// the server runs as, with their modes (postgres insists on 0700 for dir).
// dir itself may exist already.
func writeTemplate(dir string, files []templateFile, cred *syscall.Credential) error {
	for _, f := range files {
		path := filepath.Join(dir, f.rel)
		var err error
		switch {
		case f.data != nil:
			err = os.WriteFile(path, f.data, f.mode.Perm())
		case f.rel == ".":
			err = os.MkdirAll(path, f.mode.Perm())
		default:
			err = os.Mkdir(path, f.mode.Perm())
		}
		if err == nil {
			// Mkdir and WriteFile apply the umask.
			err = os.Chmod(path, f.mode.Perm())
		}
		if err == nil && cred != nil {
			err = os.Lchown(path, int(cred.Uid), int(cred.Gid))
		}
		if err != nil {
			return fmt.Errorf("write the data directory from its template: %w", err)
		}
	}
	return nil
}
