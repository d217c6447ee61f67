package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHostlistExpansion bounds how many names one hostlist expression may
// expand to, so that a hostile or mistyped range such as n[0-999999999]
// yields an error instead of exhausting memory.
const maxHostlistExpansion = 1 << 20

// maxHostNameLen bounds the length of one expanded name (DNS names have at
// most 253 bytes), so that a long prefix or a wide zero padding times
// maxHostlistExpansion names cannot exhaust memory either.
const maxHostNameLen = 255

// Expand expands a Slurm-style hostlist into node names, in order.
//
// A hostlist is a comma-separated list of host expressions. An expression is
// a name in which each bracket group "[a-b,c,...]" stands for every listed
// number or range; several groups expand as a cross product, left to right.
// Zero padding is kept when the lower bound of a range is written with
// leading zeros ("n[08-10]" is n08 n09 n10). Commas inside brackets separate
// ranges, commas outside separate expressions. Examples:
//
//	tux[0-3,12]     -> tux0 tux1 tux2 tux3 tux12
//	r[1-2]n[1-2]    -> r1n1 r1n2 r2n1 r2n2
//	login1,n[1-2]   -> login1 n1 n2
//
// Duplicates are kept; callers that need distinct names check for them.
// A name generated from brackets may not exceed 255 bytes.
func Expand(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty hostlist")
	}
	var out []string
	for _, expr := range splitTopLevel(s) {
		expr = strings.TrimSpace(expr)
		if expr == "" {
			return nil, fmt.Errorf("hostlist %q: empty entry", s)
		}
		if len(out) >= maxHostlistExpansion {
			return nil, fmt.Errorf("hostlist %q expands to more than %d names", s, maxHostlistExpansion)
		}
		names, err := expandExpr(expr, maxHostlistExpansion-len(out))
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", s, err)
		}
		out = append(out, names...)
	}
	return out, nil
}

// Split splits a hostlist at the commas that are not inside
// brackets: its expressions, unexpanded.
func Split(s string) []string { return splitTopLevel(s) }

// splitTopLevel splits s at commas that are not inside brackets.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// expandExpr expands one host expression, producing at most limit names.
func expandExpr(expr string, limit int) ([]string, error) {
	open := strings.IndexByte(expr, '[')
	if open < 0 {
		if strings.ContainsAny(expr, "] \t") {
			return nil, fmt.Errorf("bad host name %q", expr)
		}
		return []string{expr}, nil
	}
	if strings.ContainsAny(expr[:open], "] \t") {
		return nil, fmt.Errorf("bad host name %q", expr)
	}
	rel := strings.IndexByte(expr[open:], ']')
	if rel < 0 {
		return nil, fmt.Errorf("%q: '[' without ']'", expr)
	}
	close := open + rel
	body := expr[open+1 : close]
	if strings.ContainsRune(body, '[') {
		return nil, fmt.Errorf("%q: nested '['", expr)
	}
	nums, err := expandRanges(body, limit)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", expr, err)
	}
	prefix := expr[:open]
	restLimit := limit / len(nums)
	if restLimit == 0 {
		return nil, fmt.Errorf("%q expands to more than %d names", expr, maxHostlistExpansion)
	}
	rest, err := expandExpr(expr[close+1:], restLimit)
	if err != nil {
		return nil, err
	}
	if len(nums)*len(rest) > limit {
		return nil, fmt.Errorf("%q expands to more than %d names", expr, maxHostlistExpansion)
	}
	if len(prefix)+longestName(nums)+longestName(rest) > maxHostNameLen {
		return nil, fmt.Errorf("%q expands to names longer than %d bytes", expr, maxHostNameLen)
	}
	out := make([]string, 0, len(nums)*len(rest))
	for _, n := range nums {
		for _, r := range rest {
			out = append(out, prefix+n+r)
		}
	}
	return out, nil
}

// expandRanges expands the inside of one bracket group into number strings.
func expandRanges(body string, limit int) ([]string, error) {
	if body == "" {
		return nil, fmt.Errorf("empty brackets")
	}
	var out []string
	for _, part := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isDigits(lo) || (isRange && !isDigits(hi)) {
			return nil, fmt.Errorf("bad range %q (want N or N-M with decimal N, M)", part)
		}
		if !isRange {
			if len(out)+1 > limit {
				return nil, fmt.Errorf("range expands to more than %d names", maxHostlistExpansion)
			}
			out = append(out, lo)
			continue
		}
		a, err1 := strconv.ParseUint(lo, 10, 32)
		b, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("range %q: number too large", part)
		}
		if b < a {
			return nil, fmt.Errorf("range %q: upper bound below lower bound", part)
		}
		if int(b-a)+1 > limit-len(out) {
			return nil, fmt.Errorf("range %q expands to more than %d names", part, maxHostlistExpansion)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		if width > maxHostNameLen {
			return nil, fmt.Errorf("range %q: padding wider than %d digits", part, maxHostNameLen)
		}
		for v := a; v <= b; v++ {
			out = append(out, fmt.Sprintf("%0*d", width, v))
		}
	}
	return out, nil
}

// longestName returns the length of the longest string of ss.
func longestName(ss []string) int {
	m := 0
	for _, s := range ss {
		m = max(m, len(s))
	}
	return m
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Compress writes names as a Slurm hostlist, merging runs of
// consecutive numbered names that share a prefix: n0 n1 n2 n5 becomes
// "n[0-2,5]". Names whose number has leading zeros are kept as they are.
// Expand(Compress(names)) returns names.
func Compress(names []string) string {
	var out []string
	i := 0
	for i < len(names) {
		prefix, num, ok := splitNumbered(names[i])
		if !ok {
			out = append(out, names[i])
			i++
			continue
		}
		// Gather the following names with the same prefix, in order,
		// merging consecutive numbers into ranges.
		var ranges []string
		lo, hi := num, num
		j := i + 1
		for ; j < len(names); j++ {
			p, n, ok := splitNumbered(names[j])
			if !ok || p != prefix {
				break
			}
			if n == hi+1 {
				hi = n
				continue
			}
			ranges = append(ranges, rangeText(lo, hi))
			lo, hi = n, n
		}
		ranges = append(ranges, rangeText(lo, hi))
		if len(ranges) == 1 && lo == hi {
			out = append(out, names[i])
		} else {
			out = append(out, prefix+"["+strings.Join(ranges, ",")+"]")
		}
		i = j
	}
	return strings.Join(out, ",")
}

func rangeText(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
}

// splitNumbered splits "tux12" into ("tux", 12). ok is false when the name
// has no trailing number, the number has a leading zero, or the prefix
// holds characters that hostlists treat specially.
func splitNumbered(name string) (prefix string, num int, ok bool) {
	if strings.ContainsAny(name, "[],") {
		return "", 0, false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	digits := name[i:]
	if digits == "" || len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return "", 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return name[:i], n, true
}
