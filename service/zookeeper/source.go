package zookeeper

import (
	"embed"
	"io/fs"
)

// Source holds this package's Go files, so that a workshop page can quote
// a lock's own code, as built, rather than a copy that drifts from it.
//
//go:embed *.go
var Source embed.FS

// Source is the package's Go files (service.Service).
func (Service) Source() fs.FS { return Source }
