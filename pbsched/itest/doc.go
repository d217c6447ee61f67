//go:build pbsitest

// Package itest is the OpenPBS integration suite of optsched pbs: it runs
// the optsched binary against a real OpenPBS 23.06 server and checks what
// the server reports afterwards (qstat -fx -F json, pbsnodes -av -F json,
// the exit codes of PBS commands), never optsched's own printed words.
//
// The suite needs OpenPBS installed in /opt/pbs and the shared/pbs scripts
// (pbs-up.sh runs a complex in private namespaces, build-openpbs.sh builds
// OpenPBS); it is run by make itest, which builds bin/optsched and the test
// binary (go test -c -tags pbsitest) and runs the binary once per server
// configuration inside pbs-up.sh. The whole package, this file included,
// is behind the build tag pbsitest: go test ./... and go list ./... never
// see it (cmd/optsched's TestImportFlow knows no top-level folder
// pbsched), nor does go doc. Run outside a server, the tests skip and say
// what they need. docs/pbs-itest.md describes the scenarios.
package itest
