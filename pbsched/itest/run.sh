#!/bin/sh
# run.sh runs the OpenPBS integration suite (make itest; docs/pbs-itest.md).
#
# It needs the OpenPBS test scripts pbs-up.sh and build-openpbs.sh: from
# PBS_SHARED when set, else from a shared/pbs folder beside the repository
# (where the project's machines keep them). Without them it says what it
# needs and exits 0 (skipped). Settings, from the environment:
#   GO, BIN          the go command and the optsched binary to build (bin/optsched)
#   ITEST_CONFIGS    server configurations to run (default hosts sched)
#   ITEST_FLAGS      flags for the test binary (-test.v -test.timeout 10m)
set -e
repo=$(cd "$(dirname "$0")/../.." && pwd)
shared=${PBS_SHARED:-$repo/../shared/pbs}
GO=${GO:-go}
BIN=${BIN:-bin/optsched}
ITEST_CONFIGS=${ITEST_CONFIGS:-default hosts sched}
ITEST_FLAGS=${ITEST_FLAGS:--test.v -test.timeout 10m}
data=$repo/pbsched/itest/testdata

if [ ! -x "$shared/pbs-up.sh" ] || [ ! -x "$shared/build-openpbs.sh" ]; then
	echo "itest: skipped: needs the OpenPBS test scripts pbs-up.sh and build-openpbs.sh in PBS_SHARED (now $shared); give PBS_SHARED=DIR"
	exit 0
fi
shared=$(cd "$shared" && pwd)
cd "$repo"
echo "itest: building $BIN and bin/pbsitest"
"$GO" build -o "$BIN" ./cmd/optsched
"$GO" vet -tags pbsitest ./pbsched/itest
"$GO" test -c -tags pbsitest -o bin/pbsitest ./pbsched/itest
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
if [ ! -x /opt/pbs/sbin/pbs_server.bin ]; then
	echo "itest: OpenPBS is not in /opt/pbs; building it with $shared/build-openpbs.sh (10-25 min)"
	$sudo "$shared/build-openpbs.sh"
fi
set +e
start=$(date +%s)
failed=""
for cfg in $ITEST_CONFIGS; do
	case $cfg in
	default) env="" tests='^TestDefault' ;;
	hosts) env="PBSNS_VNODEDEF=$data/hosts.vnodedef PBSNS_QMGR=$data/hosts.qmgr" tests='^TestHosts' ;;
	sched) env="PBSNS_VNODES=16 PBSNS_SCHED=1" tests='^TestSched' ;;
	*) echo "itest: unknown configuration $cfg"; failed="$failed $cfg"; continue ;;
	esac
	echo "== itest: configuration $cfg"
	# shellcheck disable=SC2086 # env and ITEST_FLAGS are word lists
	$sudo env $env PBSNS_QUIET=1 OPTSCHED_ITEST_CONFIG=$cfg OPTSCHED_BIN="$repo/$BIN" \
		"$shared/pbs-up.sh" "$repo/bin/pbsitest" -test.run "$tests" $ITEST_FLAGS || failed="$failed $cfg"
done
echo "itest: $(( $(date +%s) - start )) s"
if [ -n "$failed" ]; then
	echo "itest: FAILED in:$failed"
	exit 1
fi
echo "itest: ok"
