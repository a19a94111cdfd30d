package broken

import "embed"

// Source holds this package's Go files, so that a workshop page can quote
// a lock's own code, as built, rather than a copy that drifts from it.
//
//go:embed *.go
var Source embed.FS
