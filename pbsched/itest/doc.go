// Package itest is the OpenPBS integration suite of optsched pbs: it runs
// the optsched binary against a real OpenPBS 23.06 server and checks what
// the server reports afterwards (qstat -fx -F json, pbsnodes -av -F json,
// the exit codes of PBS commands) and optsched's exit codes and audit log
// where the README defines them, never optsched's printed words.
//
// The suite needs OpenPBS installed in /opt/pbs and the shared/pbs scripts
// (pbs-up.sh runs a complex in private namespaces, build-openpbs.sh builds
// OpenPBS); it is run by make itest, which builds bin/optsched and the test
// binary (go test -c -tags pbsitest) and runs the binary once per server
// configuration inside pbs-up.sh. The tests are behind the build tag
// pbsitest, this file is not: go test ./... builds the package and finds
// no test files, and go doc shows this comment. Run outside a server, the
// tests skip and say what they need. docs/pbs-itest.md describes the
// scenarios.
package itest
