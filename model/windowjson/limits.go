package windowjson

// The limits of one window, checked while it is read, before anything
// proportional to the excess is built (docs/limits.md records them with
// measured times and peaks). MaxInputBytes (readfile.go) bounds the bytes.
const (
	// MaxJobs bounds the waiting jobs of one window (the jobs list): a
	// longer list is refused before any job is decoded. A million jobs
	// is beyond any queue PBS or Slurm keeps by default (Slurm's
	// MaxJobCount is 10,000), and a window of them is read in seconds.
	MaxJobs = 1_000_000
	// MaxRunning bounds the running jobs of one window, as MaxJobs the
	// waiting ones; every running job holds at least one of at most
	// model.MaxGeneratedNodes nodes.
	MaxRunning = 1 << 20
	// MaxStringBytes bounds one string of a window — a job id, a queue
	// name, a select or place statement, a node name, an object key —
	// after unescaping. The exceptions are the texts whose size the
	// topology bounds: topology.slurm and the hostlist strings of idle
	// and running[].nodes, bounded by MaxInputBytes alone.
	MaxStringBytes = 64 << 10
)

// maxJobs, maxRunning and maxString are the limits in force; tests lower
// them to exercise the refusals without building large windows.
var (
	maxJobs    = MaxJobs
	maxRunning = MaxRunning
	maxString  = MaxStringBytes
)
