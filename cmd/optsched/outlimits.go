package main

import (
	"fmt"

	"github.com/optsched/optsched/encode/cnf"
)

// The limits of what export and gen build, checked on an estimate before
// the program, formula or window is built and before anything is written
// (docs/limits.md records them with measured peaks).
const (
	// MaxExportNonzeros bounds the nonzero coefficients of an LP or MPS
	// export: about 90 bytes of peak memory and 30 of MPS text each, so
	// at most some 450 MB and 150 MB.
	MaxExportNonzeros = 5_000_000
	// MaxExportOptions bounds the job-node options (waiting jobs × usable
	// nodes) of a CNF export, whose formula grows faster than them
	// (50,000 options: 96 MB of DIMACS in 7 s; 500,000: 1 GB in 300 s).
	MaxExportOptions = 100_000
	// MaxExportLiterals bounds the literals of a CNF export's formula (4
	// bytes of memory and some 7 of DIMACS text each).
	MaxExportLiterals = 50_000_000
)

// outLimits are the limits in force; tests lower them.
var outLimits = struct {
	nonzeros, options, literals int64
}{MaxExportNonzeros, MaxExportOptions, MaxExportLiterals}

// cappedFormula is a cnf.Formula that stops keeping clauses once they
// hold more than max literals (the terminating zeros counted), so that
// an estimate too low cannot run the memory out; over reports it.
type cappedFormula struct {
	cnf.Formula
	lits, max int64
	over      bool
}

// Add implements cnf.Sink.
func (c *cappedFormula) Add(clause []cnf.Lit) {
	if c.over {
		return
	}
	c.lits += int64(len(clause)) + 1
	if c.lits > c.max {
		c.over = true
		c.Formula = cnf.Formula{} // give the memory back at once
		return
	}
	c.Formula.Add(clause)
}

// tooLarge is the error of an export past a limit: what, the estimate, the
// limit and what to change.
func tooLarge(what string, estimate, limit int64, remedy string) error {
	return fmt.Errorf("%s: %d, above the limit of %d (see docs/limits.md); nothing was written: %s", what, estimate, limit, remedy)
}
