package slurmsched

import _ "embed"

// HoldGuard is the job_submit/lua plug-in that keeps every new job held
// for optsched (priority 0) and refuses a user's release, priority or
// nice change; docs/slurm.md says how to install it.
//
//go:embed job_submit.lua
var HoldGuard string
