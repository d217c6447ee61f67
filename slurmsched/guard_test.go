package slurmsched

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// guardHarness runs the hold guard under a stand-alone Lua 5.1 (Slurm
// 22.05's job_submit/lua links liblua5.1) with a stub of Slurm's slurm
// table, and prints one line per case: the return code and the priority
// the submission left.
const guardHarness = `
slurm = {SUCCESS = 0, ERROR = -1, NO_VAL = 4294967294, NO_VAL16 = 65534, NO_VAL64 = 18446744073709551614}
slurm.log_user = function(msg) io.write("log: ", msg, "\n") end
dofile(arg[1])
PARTS = arg[2]
if PARTS ~= "" then
	HOLD_PARTITIONS = {}
	for p in string.gmatch(PARTS, "[^,]+") do table.insert(HOLD_PARTITIONS, p) end
	DEFAULT_PARTITION = "batch"
end
local function submit(part)
	local d = {partition = part, priority = slurm.NO_VAL}
	local rc = slurm_job_submit(d, {}, 1000)
	io.write("submit ", tostring(part), " rc=", rc, " priority=", tostring(d.priority), "\n")
end
local function modify(name, d, uid)
	local rc = slurm_job_modify(d, {partition = "batch"}, {}, uid)
	io.write("modify ", name, " uid=", uid, " rc=", rc, "\n")
end
submit(nil)
submit("batch")
submit("other")
modify("release", {priority = 4294901757}, 1000)
modify("release", {priority = 4294901757}, 0)
modify("nice", {nice = 10, priority = slurm.NO_VAL}, 1000)
modify("timelimit", {priority = slurm.NO_VAL, nice = slurm.NO_VAL16, time_limit = 5}, 1000)
modify("leave", {partition = "other", priority = slurm.NO_VAL}, 1000)
`

func TestHoldGuard(t *testing.T) {
	lua := ""
	for _, name := range []string{"lua5.1", "luajit"} {
		if p, err := exec.LookPath(name); err == nil {
			lua = p
			break
		}
	}
	if lua == "" {
		t.Skip("no Lua 5.1 interpreter (apt-get install lua5.1) to run the hold guard; make itest runs it inside a real slurmctld")
	}
	dir := t.TempDir()
	guard := filepath.Join(dir, "job_submit.lua")
	harness := filepath.Join(dir, "harness.lua")
	if err := os.WriteFile(guard, []byte(HoldGuard), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(harness, []byte(guardHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(parts string) string {
		out, err := exec.Command(lua, harness, guard, parts).CombinedOutput()
		if err != nil {
			t.Fatalf("lua: %v\n%s", err, out)
		}
		return string(out)
	}
	all := run("")
	for _, want := range []string{
		"submit nil rc=0 priority=0\n", "submit batch rc=0 priority=0\n", "submit other rc=0 priority=0\n",
		"modify release uid=1000 rc=-1\n", "modify release uid=0 rc=0\n", "modify nice uid=1000 rc=-1\n",
		"modify timelimit uid=1000 rc=0\n", "modify leave uid=1000 rc=0\n",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("every partition held: no %q in\n%s", want, all)
		}
	}
	some := run("batch")
	for _, want := range []string{
		"submit nil rc=0 priority=0\n", "submit batch rc=0 priority=0\n", "submit other rc=0 priority=4294967294\n",
		"modify leave uid=1000 rc=-1\n",
	} {
		if !strings.Contains(some, want) {
			t.Errorf("HOLD_PARTITIONS=batch: no %q in\n%s", want, some)
		}
	}
}
