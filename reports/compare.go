package reports

// ComparePage is the page of `check compare` in a report folder; the index
// links it when it is there.
const ComparePage = "compare.html"

// WriteFile writes b to path through a temporary file and a rename, as the
// report's own pages are written, so a reader never sees part of a page.
func WriteFile(path string, b []byte) error { return writeFileAtomic(path, b) }
