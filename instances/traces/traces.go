// Package traces ships the NSA paper's workload trace inside the binary,
// so that the commands whose default --trace it is (`optsched bench
// lan2023`, `optsched train nsa`) work after `go install`, away from a
// checkout. The files and their sources are described in this folder's
// README.md.
package traces

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
)

// Lan2023Name is the trace's path in a checkout of optsched, the default
// --trace of the commands that use it.
const Lan2023Name = "instances/traces/lan2023_trace_1800_40.txt.gz"

//go:embed lan2023_trace_1800_40.txt.gz
var lan2023 []byte

// Lan2023 returns a reader of the paper's trace (data_large_1800_40.txt
// of the authors' code: 100,000 lines "id arrival runtime nodes"),
// decompressed.
func Lan2023() (io.Reader, error) {
	return gzip.NewReader(bytes.NewReader(lan2023))
}
