#!/bin/sh
# run.sh runs the Slurm integration suite (make itest; docs/slurm.md).
#
# It needs the Slurm test scripts slurm-up.sh and install-slurm.sh: from
# SLURM_SHARED when set, else from a shared/slurm folder beside the
# repository. Without them, or without root (or sudo) to run them, it says
# what it needs and exits 0 (skipped). Slurm is installed with
# install-slurm.sh when absent. Settings, from the environment:
#   GO, BIN          the go command and the optsched binary to build (bin/optsched)
#   ITEST_FLAGS      flags for the test binary (-test.v -test.timeout 15m)
set -e
repo=$(cd "$(dirname "$0")/../.." && pwd)
shared=${SLURM_SHARED:-$repo/../shared/slurm}
GO=${GO:-go}
BIN=${BIN:-bin/optsched}
ITEST_FLAGS=${ITEST_FLAGS:--test.v -test.timeout 15m}

if [ ! -x "$shared/slurm-up.sh" ] || [ ! -x "$shared/install-slurm.sh" ]; then
	echo "slurm itest: skipped: needs the Slurm test scripts slurm-up.sh and install-slurm.sh in SLURM_SHARED (now $shared); give SLURM_SHARED=DIR"
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! sudo -n true 2>/dev/null; then
		echo "slurm itest: skipped: slurm-up.sh needs root (or sudo without a password)"
		exit 0
	fi
	sudo="sudo"
fi
shared=$(cd "$shared" && pwd)
cd "$repo"
echo "slurm itest: building $BIN and bin/slurmitest"
"$GO" build -o "$BIN" ./cmd/optsched
"$GO" vet -tags slurmitest ./slurmsched/itest
"$GO" test -c -tags slurmitest -o bin/slurmitest ./slurmsched/itest
if ! command -v slurmctld >/dev/null || ! command -v scontrol >/dev/null; then
	echo "slurm itest: Slurm is not installed; installing it with $shared/install-slurm.sh"
	if ! $sudo "$shared/install-slurm.sh"; then
		echo "slurm itest: skipped: install-slurm.sh could not install Slurm (no network or no apt?)"
		exit 0
	fi
fi
guard=$repo/bin/slurmitest-job_submit.lua
"$repo/$BIN" slurm hold-guard >"$guard"
chmod 644 "$guard"
start=$(date +%s)
set +e
# shellcheck disable=SC2086 # ITEST_FLAGS is a word list
$sudo env SLURMNS_HOLD=1 SLURMNS_LUA="$guard" SLURMNS_QUIET=1 SLURMNS_STATE="${SLURMNS_STATE:-/tmp/slurmns-itest}" \
	OPTSCHED_BIN="$repo/$BIN" OPTSCHED_REPO="$repo" "$shared/slurm-up.sh" "$repo/bin/slurmitest" $ITEST_FLAGS
rc=$?
# The replay against Slurm's own scheduler needs a cluster without the
# hold guard: a second one, for that test alone.
# shellcheck disable=SC2086 # ITEST_FLAGS is a word list
$sudo env SLURMNS_HOLD=0 SLURMNS_QUIET=1 SLURMNS_STATE="${SLURMNS_STATE:-/tmp/slurmns-itest}" \
	OPTSCHED_BIN="$repo/$BIN" OPTSCHED_REPO="$repo" "$shared/slurm-up.sh" "$repo/bin/slurmitest" $ITEST_FLAGS -test.run '^TestReplay' || rc=1
echo "slurm itest: $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then
	echo "slurm itest: FAILED"
	exit 1
fi
echo "slurm itest: ok"
