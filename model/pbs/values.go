package pbs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/optsched/optsched/model"
)

// ParseDuration parses a PBS duration: [[HH:]MM:]SS with any number of
// hours (eligible_time reaches 8199:09:40 on real servers), or plain
// seconds. Minutes and seconds after a larger unit must be below 60.
func ParseDuration(s string) (int64, error) {
	t := strings.TrimSpace(s)
	parts := strings.Split(t, ":")
	if t == "" || len(parts) > 3 {
		return 0, fmt.Errorf("%q is not a duration ([[HH:]MM:]SS)", s)
	}
	var total int64
	for i, p := range parts {
		if p == "" || len(p) > 12 || strings.TrimLeft(p, "0123456789") != "" {
			return 0, fmt.Errorf("%q is not a duration ([[HH:]MM:]SS)", s)
		}
		v, _ := strconv.ParseInt(p, 10, 64)
		if i > 0 && v >= 60 {
			return 0, fmt.Errorf("%q is not a duration: %s must be below 60", s, p)
		}
		total = total*60 + v
		if total > maxTime {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
	}
	return total, nil
}

// ctimeLayout is the layout of PBS's time attributes (ctime, qtime, etime,
// stime) in qstat -f output, C's ctime(3) without the newline; days below
// 10 are padded with a space, which ParseTime folds.
const ctimeLayout = "Mon Jan 2 15:04:05 2006"

// ParseTime parses a PBS time attribute: a ctime(3) string such as
// "Tue Nov  7 18:12:33 2023", read in loc (the server's time zone), or
// seconds since 1970 as some PBS versions and pbsnodes print them.
func ParseTime(s string, loc *time.Location) (int64, error) {
	t := strings.TrimSpace(s)
	if t != "" && strings.TrimLeft(t, "0123456789") == "" && len(t) <= 12 {
		n, _ := strconv.ParseInt(t, 10, 64)
		if n <= maxTime {
			return n, nil
		}
	}
	if loc == nil {
		loc = time.Local
	}
	tm, err := time.ParseInLocation(ctimeLayout, strings.Join(strings.Fields(t), " "), loc)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time (want ctime form such as \"Tue Nov  7 18:12:33 2023\" or seconds since 1970)", s)
	}
	if u := tm.Unix(); u < 0 || u > maxTime {
		return 0, fmt.Errorf("time %q is out of range", s)
	} else {
		return u, nil
	}
}

// A Place is a job's Resource_List.place as written: how its chunks are
// arranged on vnodes and whether it shares them ([PBS 2022.1 RG]
// pbs_resources, place). It is model.PlaceStatement, whose parser is the
// one of the PBS place syntax.
type Place = model.PlaceStatement

// ParsePlace parses a place statement such as "scatter:excl",
// "pack:group=switch" or "free" (model.ParsePlaceStatement). The empty
// string is the default (free, sharing decided by the vnodes).
func ParsePlace(s string) (Place, error) { return model.ParsePlaceStatement(s) }

// A VnodeUse is one vnode of an exec_vnode chunk with the resources the
// job uses there: numeric amounts (integers and sizes in bytes) and, in a
// qrun -H specification, string-valued resources (Labels, nil when none).
type VnodeUse struct {
	Vnode   string
	Amounts model.Resources
	Labels  map[string]string
}

// A VChunk is one parenthesised chunk of an exec_vnode string: the vnodes
// one chunk of the job's select statement runs on (usually one).
type VChunk []VnodeUse

// maxExecChunks bounds the chunks of one exec_vnode string.
const maxExecChunks = 1 << 20

// ParseExecVnode parses an exec_vnode string such as
// "(n1:ncpus=16:mem=4gb)+(n2:ncpus=8+n3:ncpus=8)", the format of the
// exec_vnode job attribute and of `qrun -H` ([PBS 2022.1 RG] qrun).
// Values that parse as integers or sizes (model.ParseSize) are amounts,
// others labels, except that ncpus, mem and the like must be numeric;
// names may contain brackets (multi-vnode hosts name vnodes host[0],
// host[1]).
func ParseExecVnode(s string) ([]VChunk, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, fmt.Errorf("empty exec_vnode")
	}
	var out []VChunk
	rest := t
	for {
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, "(") {
			return nil, fmt.Errorf("chunk %d of %q does not start with '('", len(out)+1, cut(s))
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return nil, fmt.Errorf("chunk %d of %q has no ')'", len(out)+1, cut(s))
		}
		body := rest[1:end]
		if strings.ContainsAny(body, "(") {
			return nil, fmt.Errorf("chunk %d of %q: nested '('", len(out)+1, cut(s))
		}
		var vc VChunk
		for _, part := range strings.Split(body, "+") {
			fields := strings.Split(strings.TrimSpace(part), ":")
			name := strings.TrimSpace(fields[0])
			if !validVnodeName(name) {
				return nil, fmt.Errorf("chunk %d of %q: bad vnode name %q", len(out)+1, cut(s), name)
			}
			u := VnodeUse{Vnode: name, Amounts: model.Resources{}}
			for _, kv := range fields[1:] {
				k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
				if !ok || k == "" || v == "" {
					return nil, fmt.Errorf("chunk %d of %q: %q is not resource=value", len(out)+1, cut(s), kv)
				}
				_, dupA := u.Amounts[k]
				_, dupL := u.Labels[k]
				if dupA || dupL {
					return nil, fmt.Errorf("chunk %d of %q: %s given twice for %s", len(out)+1, cut(s), k, name)
				}
				if n, err := model.ParseSize(v); err == nil {
					u.Amounts[k] = n
					continue
				}
				if integerResources[k] || sizeResources[k] {
					return nil, fmt.Errorf("chunk %d of %q: %s=%s is not a number or a size", len(out)+1, cut(s), k, v)
				}
				if u.Labels == nil {
					u.Labels = map[string]string{}
				}
				u.Labels[k] = v
			}
			vc = append(vc, u)
		}
		out = append(out, vc)
		if len(out) > maxExecChunks {
			return nil, fmt.Errorf("more than %d chunks", maxExecChunks)
		}
		rest = strings.TrimSpace(rest[end+1:])
		if rest == "" {
			return out, nil
		}
		if !strings.HasPrefix(rest, "+") {
			return nil, fmt.Errorf("after chunk %d of %q: want '+', got %q", len(out), cut(s), cut(rest))
		}
		rest = rest[1:]
	}
}

// Vnodes returns the distinct vnode names of chunks, in order of first
// appearance.
func Vnodes(chunks []VChunk) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range chunks {
		for _, u := range c {
			if !seen[u.Vnode] {
				seen[u.Vnode] = true
				out = append(out, u.Vnode)
			}
		}
	}
	return out
}

// validVnodeName reports whether name can be a vnode name in exec_vnode
// and qrun -H: non-empty, printable ASCII, none of the separators
// ( ) + : = , space or a shell quote character.
func validVnodeName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()+:=,'\"`$\\;&|<>*?!#~{}", c) >= 0 {
			return false
		}
	}
	return true
}

// ValidName reports whether a vnode name or job id is safe to write into
// a qrun command line: non-empty printable ASCII without separators,
// white space or shell metacharacters. Brackets (host[0], 12[3].svr), '.',
// '-', '_' and '@' are allowed.
func ValidName(name string) bool { return validVnodeName(name) }

// cut shortens s for a message.
func cut(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
