package cycle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/pbsched"
)

// maxInput bounds each document a cycle reads (256 MiB).
const maxInput = windowjson.MaxInputBytes

// commandTimeout bounds each qstat or pbsnodes call.
const commandTimeout = 2 * time.Minute

// The commands whose output a cycle reads, and where pbs_snapshot keeps
// it.
var (
	qstatCommand  = []string{"qstat", "-f", "-t", "-F", "json"}
	nodesCommand  = []string{"pbsnodes", "-av", "-F", "json"}
	queuesCommand = []string{"qstat", "-Q", "-f", "-F", "json"}
)

const (
	qstatSnapshot  = "job/qstat_f_F_json.out"
	nodesSnapshot  = "node/pbsnodes_avFjson.out"
	queuesSnapshot = "server/qstat_Qf.out"
)

// readDoc reads one input document: the file flag ("-" is Stdin), else
// the pbs_snapshot file, else the output of the command.
func (c *Config) readDoc(ctx context.Context, flag, file, snapshotPath string, command []string) ([]byte, string, error) {
	if file != "" {
		if file == "-" {
			if c.Stdin == nil {
				return nil, "", fmt.Errorf("%s -: no standard input", flag)
			}
			data, err := io.ReadAll(io.LimitReader(c.Stdin, maxInput+1))
			if err != nil {
				return nil, "", fmt.Errorf("%s -: %w", flag, err)
			}
			if len(data) > maxInput {
				return nil, "", fmt.Errorf("%s -: stdin larger than %d bytes", flag, maxInput)
			}
			return data, "stdin", nil
		}
		data, err := readFileLimited(file)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", flag, err)
		}
		return data, file, nil
	}
	if c.Snapshot != "" {
		p := filepath.Join(c.Snapshot, snapshotPath)
		data, err := readFileLimited(p)
		if err != nil {
			return nil, "", fmt.Errorf("--snapshot: %w", err)
		}
		return data, p, nil
	}
	return c.runDoc(ctx, flag, command)
}

// runDoc reads one input document from the output of command, found on
// PATH, within commandTimeout and maxInput bytes.
func (c *Config) runDoc(ctx context.Context, flag string, command []string) ([]byte, string, error) {
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, "", fmt.Errorf("%s is not on PATH (give %s FILE or --snapshot DIR): %w", command[0], flag, err)
	}
	if command[0] == "qstat" && !c.KeepQstatDelay {
		clearQstatPacing(qstatPacingPath())
	}
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, path, command[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &out, n: maxInput}, &limitedWriter{w: &errb, n: 4096}
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("%s: %w: %s", strings.Join(command, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), strings.Join(command, " "), nil
}

// qstatPacingPath is this process's qstat pacing file (a variable for
// the tests).
var qstatPacingPath = func() string { return qstatPacingFile(os.Getuid()) }

// qstatPacingFile is the file in which OpenPBS's qstat keeps the time of
// the user's last qstat (TMP_DIR/.pbs_last_query_UID, TMP_DIR being
// /var/tmp unless PBS was configured --with-tmpdir).
func qstatPacingFile(uid int) string {
	return fmt.Sprintf("/var/tmp/.pbs_last_query_%d", uid)
}

// clearQstatPacing removes qstat's pacing file, so that the next qstat
// does not sleep 200 ms for having a predecessor in the same second
// (see Config.KeepQstatDelay). Only an empty regular file is removed:
// anything else at that path is not qstat's and is left alone, and so
// is any error (the cost is then one paced read, never a failed one).
func clearQstatPacing(path string) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		return
	}
	_ = os.Remove(path)
}

// readFileLimited reads a file of at most maxInput bytes.
func readFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxInput)
	}
	return data, nil
}

// limitedWriter keeps the first n bytes written to it and fails after.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, fmt.Errorf("output larger than the limit")
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// readState reads and parses the three documents. The state comes back
// with its digest once the documents are read, also when one of them
// does not parse.
func (c *Config) readState(ctx context.Context) (*pbsched.State, error) {
	loc, err := loadLocation(c.Timezone)
	if err != nil {
		return nil, ConfigError{fmt.Errorf("--timezone: %w", err)}
	}
	h := sha256.New()
	// The documents are read at once: on a busy server host each command
	// takes its own fraction of a second, and the cycle's reaction time
	// is their longest, not their sum. Errors keep the order qstat,
	// pbsnodes, queues.
	var (
		jobsData, nodesData, queuesData []byte
		jobsSrc, nodesSrc, queuesSrc    string
		jobsErr, nodesErr, queuesErr    error
		wg                              sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		jobsData, jobsSrc, jobsErr = c.readDoc(ctx, "--qstat", c.QstatFile, qstatSnapshot, qstatCommand)
	}()
	go func() {
		defer wg.Done()
		nodesData, nodesSrc, nodesErr = c.readDoc(ctx, "--pbsnodes", c.NodesFile, nodesSnapshot, nodesCommand)
	}()
	switch {
	case c.QueuesFile != "" || c.Snapshot != "":
		queuesData, queuesSrc, queuesErr = c.readDoc(ctx, "--queues", c.QueuesFile, queuesSnapshot, nil)
	case len(c.ExecQueues) > 0:
		// The operator named the execution queues.
	case c.QstatFile != "" || c.NodesFile != "":
		queuesErr = ConfigError{errors.New("reading the state from files needs the queue list too: give --queues FILE (qstat -Q -f -F json) or --exec-queues")}
	default:
		queuesData, queuesSrc, queuesErr = c.runDoc(ctx, "--queues", queuesCommand)
	}
	wg.Wait()
	for _, err := range []error{jobsErr, nodesErr, queuesErr} {
		if err != nil {
			return nil, err
		}
	}
	for _, part := range [][]byte{jobsData, nodesData, queuesData} {
		fmt.Fprintf(h, "%d\n", len(part))
		h.Write(part)
	}
	st := &pbsched.State{Digest: hex.EncodeToString(h.Sum(nil))}
	if st.Jobs, err = pbs.ParseJobs(jobsData, loc); err != nil {
		return st, fmt.Errorf("%s: %w", jobsSrc, err)
	}
	if st.Nodes, err = pbs.ParseNodesLenient(nodesData); err != nil {
		return st, fmt.Errorf("%s: %w", nodesSrc, err)
	}
	if queuesData != nil {
		if st.Queues, err = pbs.ParseQueues(queuesData); err != nil {
			return st, fmt.Errorf("%s: %w", queuesSrc, err)
		}
	}
	switch {
	case st.Jobs.Timestamp > 0:
		st.Now = st.Jobs.Timestamp
	case st.Nodes.Timestamp > 0:
		st.Now = st.Nodes.Timestamp
	default:
		st.Now = time.Now().Unix()
	}
	return st, nil
}

// readFresh reads the jobs and vnodes from the server's commands (qstat
// -f -t, pbsnodes -av), whatever the cycle's state was read from; the
// queue list is the one the cycle read.
func (c *Config) readFresh(ctx context.Context, prev *pbsched.State) (*pbsched.State, error) {
	var (
		jobsData, nodesData []byte
		jobsErr, nodesErr   error
		wg                  sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		jobsData, _, jobsErr = c.runDoc(ctx, "--qstat", qstatCommand)
	}()
	nodesData, _, nodesErr = c.runDoc(ctx, "--pbsnodes", nodesCommand)
	wg.Wait()
	if jobsErr != nil {
		return nil, jobsErr
	}
	if nodesErr != nil {
		return nil, nodesErr
	}
	loc, err := loadLocation(c.Timezone)
	if err != nil {
		return nil, err
	}
	fresh := &pbsched.State{Queues: prev.Queues, Digest: prev.Digest}
	if fresh.Jobs, err = pbs.ParseJobs(jobsData, loc); err != nil {
		return nil, fmt.Errorf("qstat: %w", err)
	}
	if fresh.Nodes, err = pbs.ParseNodesLenient(nodesData); err != nil {
		return nil, fmt.Errorf("pbsnodes: %w", err)
	}
	fresh.Now = max(fresh.Jobs.Timestamp, prev.Now)
	return fresh, nil
}

// loadLocation loads a time zone: "" and Local are the local time zone.
func loadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "Local":
		return time.Local, nil
	case "UTC":
		return time.UTC, nil
	}
	return time.LoadLocation(name)
}
