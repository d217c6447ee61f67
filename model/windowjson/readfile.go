package windowjson

import (
	"fmt"
	"io"
	"os"
)

// MaxInputBytes bounds what optsched reads from one input file or from
// stdin: 256 MiB, so that /dev/zero or a runaway file is an error, not
// gigabytes of memory.
const MaxInputBytes = 256 << 20

// ReadFileLimited reads the file at path, of at most MaxInputBytes: a
// larger file (or a device that never ends) is an error naming the limit.
func ReadFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, path)
}

// ReadLimited reads r to its end, at most MaxInputBytes; name names the
// input in the error.
func ReadLimited(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, inputLimit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > inputLimit {
		return nil, fmt.Errorf("%s: larger than %d bytes, the limit of one input", name, inputLimit)
	}
	return data, nil
}

// inputLimit is MaxInputBytes; tests lower it.
var inputLimit int64 = MaxInputBytes
