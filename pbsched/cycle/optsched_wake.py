# optsched_wake: a PBS server hook (events postqueuejob, jobobit) that wakes
# `optsched pbs run --pid-file @PID_FILE@` with SIGUSR1, so that its next
# cycle follows a submission or a job's end at once rather than at the
# next --interval. Made by `optsched pbs wake-hook`; installed with
#   qmgr -c "create hook optsched_wake"
#   qmgr -c "set hook optsched_wake event = 'postqueuejob,jobobit'"
#   qmgr -c "import hook optsched_wake application/x-python default optsched_wake.py"
# It never refuses a job: whatever happens here, the event is accepted.
import os
import signal

import pbs

PID_FILE = "@PID_FILE@"


def wake():
    try:
        with open(PID_FILE) as f:
            pid = int(f.read().split()[0])
        # A stale pid file must not signal another program.
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if b"optsched" not in f.read():
                return
        os.kill(pid, signal.SIGUSR1)
    except Exception:
        pass  # optsched is not running: its interval will see the change


wake()
pbs.event().accept()
