// Package layout holds no code: its tests check the repository's shape,
// as docs/layout.md describes it. Who may import each lock service's
// client library (imports_test.go), and how big a package and a function
// may grow (size_test.go).
package layout
