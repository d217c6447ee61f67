package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Select is a parsed PBS select statement: chunks joined by "+", each
// "[count:]res=value[:res=value...]", as in "2:ncpus=8:ngpus=1+1:mem=64gb".
type Select []Chunk

// A Chunk is count identical units of a job, each needing Amounts of
// consumable resources and matching Labels (string-valued resources such
// as host=n3 or arch=linux).
type Chunk struct {
	Count   int
	Amounts Resources
	Labels  map[string]string
}

// Units returns the total number of chunks (job units) of the statement.
func (s Select) Units() int {
	n := 0
	for _, c := range s {
		n += c.Count
	}
	return n
}

// String writes the statement back in PBS form, resources in sorted order.
func (s Select) String() string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(c.Count))
		for _, k := range sortedKeys(c.Amounts) {
			fmt.Fprintf(&b, ":%s=%d", k, c.Amounts[k])
		}
		for _, k := range sortedKeys(c.Labels) {
			fmt.Fprintf(&b, ":%s=%s", k, c.Labels[k])
		}
	}
	return b.String()
}

// integerResources are PBS resources whose values are plain integers;
// sizeResources are byte sizes with optional PBS unit suffixes. Any other
// resource is numeric when its value parses as a size and a label
// otherwise.
var (
	integerResources = map[string]bool{"ncpus": true, "ngpus": true, "nmics": true, "mpiprocs": true, "ompthreads": true, "nodect": true}
	sizeResources    = map[string]bool{"mem": true, "vmem": true, "pmem": true}
)

// MaxChunkCount bounds the count of one chunk of a select statement, and
// the chunks of a whole statement, against typos such as
// 99999999999:ncpus=1. ParseSelect enforces it.
const MaxChunkCount = 1 << 20

// ParseSelect parses a PBS select statement. The count of a chunk defaults
// to 1. Values of ncpus, ngpus, nmics, mpiprocs and ompthreads must be
// non-negative integers; mem, vmem and pmem are sizes (see ParseSize).
func ParseSelect(s string) (Select, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty select statement")
	}
	var out Select
	total := 0
	for ci, chunkText := range strings.Split(s, "+") {
		parts := strings.Split(chunkText, ":")
		c := Chunk{Count: 1}
		first := 0
		if p := strings.TrimSpace(parts[0]); p != "" && !strings.Contains(p, "=") {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > MaxChunkCount {
				return nil, fmt.Errorf("chunk %d: count %q must be an integer from 1 to %d", ci+1, p, MaxChunkCount)
			}
			c.Count = n
			first = 1
		}
		if total += c.Count; total > MaxChunkCount {
			return nil, fmt.Errorf("more than %d chunks in all", MaxChunkCount)
		}
		for _, kv := range parts[first:] {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, fmt.Errorf("chunk %d: %q is not resource=value", ci+1, kv)
			}
			if !ValidResourceName(k) {
				return nil, fmt.Errorf("chunk %d: bad resource name %q", ci+1, k)
			}
			if _, dup := c.Amounts[k]; dup {
				return nil, fmt.Errorf("chunk %d: resource %q given twice", ci+1, k)
			}
			if _, dup := c.Labels[k]; dup {
				return nil, fmt.Errorf("chunk %d: resource %q given twice", ci+1, k)
			}
			amount, isNum, err := parseResourceValue(k, v)
			if err != nil {
				return nil, fmt.Errorf("chunk %d: %w", ci+1, err)
			}
			if isNum {
				if c.Amounts == nil {
					c.Amounts = Resources{}
				}
				c.Amounts[k] = amount
			} else {
				if c.Labels == nil {
					c.Labels = map[string]string{}
				}
				c.Labels[k] = v
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// parseResourceValue parses the value v of resource k: an integer for the
// integer resources, a size for the size resources, and for others a size
// when it parses as one (isNum) or a label.
func parseResourceValue(k, v string) (amount int64, isNum bool, err error) {
	switch {
	case integerResources[k]:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s=%s: must be a non-negative integer", k, v)
		}
		return n, true, nil
	case sizeResources[k]:
		n, err := ParseSize(v)
		if err != nil {
			return 0, false, fmt.Errorf("%s=%s: %w", k, v, err)
		}
		return n, true, nil
	}
	if n, err := ParseSize(v); err == nil {
		return n, true, nil
	}
	return 0, false, nil
}

// ValidResourceName reports whether k may name a resource: a non-empty
// string of ASCII letters, digits, '_', '-' and '.'. ParseSelect holds
// the resources of a select statement to it.
func ValidResourceName(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}

// ParseSize parses a PBS size: a non-negative integer with an optional
// unit b, kb, mb, gb, tb or pb (powers of 1024, case-insensitive), or w,
// kw, mw, gw, tw, pw (8-byte words). A bare number is bytes.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("bad size %q (want an integer with an optional unit such as 64gb)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	unit := t[i:]
	word := int64(1)
	if strings.HasSuffix(unit, "w") {
		word = 8
		unit = strings.TrimSuffix(unit, "w") + "b"
	}
	var mult int64
	switch unit {
	case "", "b":
		mult = 1
	case "kb":
		mult = 1 << 10
	case "mb":
		mult = 1 << 20
	case "gb":
		mult = 1 << 30
	case "tb":
		mult = 1 << 40
	case "pb":
		mult = 1 << 50
	default:
		return 0, fmt.Errorf("bad size %q: unknown unit %q", s, t[i:])
	}
	mult *= word
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
