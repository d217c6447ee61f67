package pbs

import (
	"slices"
	"testing"
)

func TestResolveVnodes(t *testing.T) {
	exists := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	multi := exists("pbshost", "pbshost[0]", "pbshost[1]", "pbshost[2]", "pbshost[3]", "cn00", "cn01", "cn02")
	cases := []struct {
		list      string
		want      []string
		unmatched []string
	}{
		{"pbshost[0]", []string{"pbshost[0]"}, nil},
		{"pbshost[0],pbshost[2]", []string{"pbshost[0]", "pbshost[2]"}, nil},
		{"pbshost[1-2]", []string{"pbshost[1]", "pbshost[2]"}, nil},
		{"pbshost[0,3]", []string{"pbshost[0]", "pbshost[3]"}, nil},
		{"cn[00-01],cn02", []string{"cn00", "cn01", "cn02"}, nil},
		{"cn[00-09]", []string{"cn00", "cn01", "cn02"}, nil},
		{"cn00,cn00,pbshost[0],pbshost[0-1]", []string{"cn00", "pbshost[0]", "pbshost[1]"}, nil},
		{"pbshost", []string{"pbshost"}, nil},
		{"gpu[1-4],cn01", []string{"cn01"}, []string{"gpu[1-4]"}},
		{"nosuch", nil, []string{"nosuch"}},
	}
	for _, c := range cases {
		got, un, err := ResolveVnodes(c.list, multi)
		if err != nil {
			t.Errorf("%q: %v", c.list, err)
			continue
		}
		if !slices.Equal(got, c.want) || !slices.Equal(un, c.unmatched) {
			t.Errorf("%q: got %v (unmatched %v), want %v (unmatched %v)", c.list, got, un, c.want, c.unmatched)
		}
	}
	for _, bad := range []string{"", "a,,b", "n[3-1]", "n[1-2"} {
		if _, _, err := ResolveVnodes(bad, multi); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// A literal name with brackets that is not a valid hostlist is fine
	// when the vnode exists.
	odd := exists("host[a]")
	if got, _, err := ResolveVnodes("host[a]", odd); err != nil || !slices.Equal(got, []string{"host[a]"}) {
		t.Errorf("host[a]: %v %v", got, err)
	}
}

func FuzzResolveVnodes(f *testing.F) {
	for _, s := range []string{"pbshost[0-3]", "cn[00-07],x", "a[1,2]b[3]", "[", "]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, _, err := ResolveVnodes(s, func(n string) bool { return len(n) < 12 })
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] || len(n) >= 12 {
				t.Fatalf("%q: bad name %q in %v", s, n, names)
			}
			seen[n] = true
		}
	})
}
