package encode

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Sense is the relation of a row: ≤, = or ≥.
type Sense byte

const (
	LE Sense = 'L' // Σ a·x ≤ rhs
	EQ Sense = 'E' // Σ a·x = rhs
	GE Sense = 'G' // Σ a·x ≥ rhs
)

// A Row is one linear constraint Σ_k Coefs[k]·x[Cols[k]] Sense RHS.
type Row struct {
	Name  string
	Cols  []int
	Coefs []float64
	Sense Sense
	RHS   float64
}

// A Program is a neutral sparse 0-1 program
//
//	minimise   Σ_j Obj[j]·x[j]
//	subject to every Row
//	           x[j] ∈ {0, 1}
//
// It holds no solver types; backends translate it to their own API, and
// WriteLP / WriteMPS hand it to outside solvers.
type Program struct {
	// Name names the model in written files.
	Name string
	// VarNames holds one name per variable; names are unique and use
	// only letters, digits and '_' so that every file format takes them.
	VarNames []string
	// Obj holds the objective coefficient of each variable.
	Obj  []float64
	Rows []Row
}

// NumVars returns the number of variables.
func (p *Program) NumVars() int { return len(p.VarNames) }

// NumNonzeros returns the number of nonzero coefficients over all rows.
func (p *Program) NumNonzeros() int {
	n := 0
	for i := range p.Rows {
		n += len(p.Rows[i].Cols)
	}
	return n
}

// AddVar appends a binary variable and returns its index.
func (p *Program) AddVar(name string, obj float64) int {
	p.VarNames = append(p.VarNames, name)
	p.Obj = append(p.Obj, obj)
	return len(p.VarNames) - 1
}

// AddRow appends a row. It panics if cols and coefs differ in length (a
// programmer error).
func (p *Program) AddRow(name string, cols []int, coefs []float64, s Sense, rhs float64) {
	if len(cols) != len(coefs) {
		panic("encode: AddRow with mismatched cols and coefs")
	}
	p.Rows = append(p.Rows, Row{Name: name, Cols: cols, Coefs: coefs, Sense: s, RHS: rhs})
}

// Repeat returns n coefficients equal to v: the row of a sum (v = 1) or
// of a difference (v = −1).
func Repeat(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// Value returns the objective value of x.
func (p *Program) Value(x []float64) float64 {
	var v float64
	for j, c := range p.Obj {
		v += c * x[j]
	}
	return v
}

// Violation returns the largest violation of a row or of the 0-1 bounds by
// x (0 when x is feasible), and the name of the row or variable concerned.
func (p *Program) Violation(x []float64) (float64, string) {
	worst, where := 0.0, ""
	for j, v := range x {
		if d := max(-v, v-1); d > worst {
			worst, where = d, p.VarNames[j]
		}
	}
	for i := range p.Rows {
		r := &p.Rows[i]
		var lhs float64
		for k, c := range r.Cols {
			lhs += r.Coefs[k] * x[c]
		}
		var d float64
		switch r.Sense {
		case LE:
			d = lhs - r.RHS
		case GE:
			d = r.RHS - lhs
		default:
			d = math.Abs(lhs - r.RHS)
		}
		if d > worst {
			worst, where = d, r.Name
		}
	}
	return worst, where
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteLP writes p in lp_solve's LP format: the objective stated as
// "min:", one named row per constraint, and every variable declared in a
// "bin" section.
func (p *Program) WriteLP(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "/* %s: %d binary variables, %d rows; written by optsched */\n", p.Name, p.NumVars(), len(p.Rows))
	w.WriteString("min: ")
	terms := 0
	for j, c := range p.Obj {
		if c == 0 {
			continue
		}
		writeTerm(w, c, p.VarNames[j], terms == 0)
		if terms++; terms%8 == 0 {
			w.WriteString("\n  ")
		}
	}
	if terms == 0 {
		w.WriteString("0")
	}
	w.WriteString(";\n\n")
	for i := range p.Rows {
		r := &p.Rows[i]
		fmt.Fprintf(w, "%s: ", r.Name)
		for k, c := range r.Cols {
			writeTerm(w, r.Coefs[k], p.VarNames[c], k == 0)
			if (k+1)%8 == 0 {
				w.WriteString("\n  ")
			}
		}
		if len(r.Cols) == 0 && p.NumVars() > 0 {
			w.WriteString("0 " + p.VarNames[0]) // an empty row, kept valid
		}
		op := map[Sense]string{LE: "<=", EQ: "=", GE: ">="}[r.Sense]
		fmt.Fprintf(w, " %s %s;\n", op, num(r.RHS))
	}
	w.WriteString("\nbin ")
	for j, name := range p.VarNames {
		if j > 0 {
			w.WriteString(", ")
			if j%10 == 0 {
				w.WriteString("\n  ")
			}
		}
		w.WriteString(name)
	}
	w.WriteString(";\n")
	return w.Flush()
}

func writeTerm(w *bufio.Writer, c float64, name string, first bool) {
	switch {
	case c < 0:
		w.WriteString(" -")
		c = -c
	case !first:
		w.WriteString(" +")
	}
	if c != 1 {
		w.WriteString(num(c))
		w.WriteByte(' ')
	}
	w.WriteString(name)
}

// WriteMPS writes p in free MPS, with the objective sense stated as
// minimisation (OBJSENSE MIN) and every variable marked integer with bounds
// 0 and 1 (BV), which CBC, HiGHS, SCIP, Gurobi and lp_solve read.
func (p *Program) WriteMPS(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "* %s: %d binary variables, %d rows; written by optsched\n", p.Name, p.NumVars(), len(p.Rows))
	fmt.Fprintf(w, "NAME %s\nOBJSENSE\n    MIN\nROWS\n N obj\n", p.Name)
	for i := range p.Rows {
		fmt.Fprintf(w, " %c %s\n", p.Rows[i].Sense, p.Rows[i].Name)
	}
	// Column-wise entries.
	type entry struct {
		row  int
		coef float64
	}
	cols := make([][]entry, p.NumVars())
	for i := range p.Rows {
		r := &p.Rows[i]
		for k, c := range r.Cols {
			cols[c] = append(cols[c], entry{i, r.Coefs[k]})
		}
	}
	w.WriteString("COLUMNS\n    MARKER 'MARKER' 'INTORG'\n")
	for j, name := range p.VarNames {
		fmt.Fprintf(w, "    %s obj %s\n", name, num(p.Obj[j]))
		for _, e := range cols[j] {
			fmt.Fprintf(w, "    %s %s %s\n", name, p.Rows[e.row].Name, num(e.coef))
		}
	}
	w.WriteString("    MARKER 'MARKER' 'INTEND'\nRHS\n")
	for i := range p.Rows {
		if p.Rows[i].RHS != 0 {
			fmt.Fprintf(w, "    rhs %s %s\n", p.Rows[i].Name, num(p.Rows[i].RHS))
		}
	}
	w.WriteString("BOUNDS\n")
	for _, name := range p.VarNames {
		fmt.Fprintf(w, " BV bnd %s\n", name)
	}
	w.WriteString("ENDATA\n")
	return w.Flush()
}
