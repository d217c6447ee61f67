package hostlist

import (
	"slices"
	"strings"
	"testing"
)

var hostlistGood = []struct {
	in   string
	want []string
}{
	{"tux3", []string{"tux3"}},
	{"  tux3 ", []string{"tux3"}},
	{"tux[0-3,12]", []string{"tux0", "tux1", "tux2", "tux3", "tux12"}},
	{"n[1,3,5]", []string{"n1", "n3", "n5"}},
	{"n[7-7]", []string{"n7"}},
	{"n[08-10]", []string{"n08", "n09", "n10"}},
	{"n[001-003]", []string{"n001", "n002", "n003"}},
	{"n[0-1]", []string{"n0", "n1"}},
	{"n[007]", []string{"n007"}},
	{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
	{"r[1-2]-n[01-02]-x", []string{"r1-n01-x", "r1-n02-x", "r2-n01-x", "r2-n02-x"}},
	{"login1,n[1-2]", []string{"login1", "n1", "n2"}},
	{"a, b ,c", []string{"a", "b", "c"}},
	{"n[1-2],m[3,5-6]", []string{"n1", "n2", "m3", "m5", "m6"}},
	{"[1-3]", []string{"1", "2", "3"}},
	{"n[1-2]-ib", []string{"n1-ib", "n2-ib"}},
	{"n1,n1", []string{"n1", "n1"}}, // duplicates are kept
}

func TestExpand(t *testing.T) {
	for _, tc := range hostlistGood {
		got, err := Expand(tc.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExpandHostlistLimit checks that the expansion cap is exact: 2^20 names
// pass, one more fails, whichever expression brings the total over.
func TestExpandHostlistLimit(t *testing.T) {
	got, err := Expand("n[0-1048575]")
	if err != nil || len(got) != maxHostlistExpansion {
		t.Fatalf("n[0-1048575]: %d names, %v; want %d names", len(got), err, maxHostlistExpansion)
	}
	got, err = Expand("x,n[1-1048575]")
	if err != nil || len(got) != maxHostlistExpansion {
		t.Fatalf("x,n[1-1048575]: %d names, %v; want %d names", len(got), err, maxHostlistExpansion)
	}
	// Regression: a plain name after a full expansion used to be appended
	// without checking the cap, giving 2^20+1 names.
	for _, in := range []string{"n[0-1048575],x", "n[0-1048575],m[1]", "x,n[0-1048575]", "n[0-1048575],n[0-1048575]"} {
		if got, err := Expand(in); err == nil {
			t.Errorf("Expand(%q) = %d names, want an error", in, len(got))
		} else if !strings.Contains(err.Error(), "more than 1048576 names") {
			t.Errorf("Expand(%q): %v, want a message about the cap", in, err)
		}
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	long := strings.Repeat("a", 300)
	cases := []struct {
		in, phrase string
	}{
		{"", "empty hostlist"},
		{"   ", "empty hostlist"},
		{"a,,b", "empty entry"},
		{"a,", "empty entry"},
		{",a", "empty entry"},
		{"n[1-3", "'[' without ']'"},
		{"n[", "'[' without ']'"},
		{"n1-3]", "bad host name"},
		{"n]1[", "bad host name"},
		{"n[1]]", "bad host name"},
		{"n[1-2]x]", "bad host name"},
		{"n[]", "empty brackets"},
		{"n[3-1]", "upper bound below lower bound"},
		{"n[a-b]", "bad range"},
		{"n[1-b]", "bad range"},
		{"n[-1]", "bad range"},
		{"n[1-]", "bad range"},
		{"n[1-2-3]", "bad range"},
		{"n[1,,2]", "bad range"},
		{"n[ 1]", "bad range"},
		{"n[1[2]]", "nested '['"},
		{"n[[1]]", "nested '['"},
		{"tux 1", "bad host name"},
		{"n[0-99999999]", "more than 1048576 names"},
		{"n[0-4294967295]", "more than 1048576 names"},
		{"n[0-4294967296]", "number too large"},
		{"n[0-99999999999999999999999]", "number too large"},
		{"r[0-1023]n[0-1024]", "more than 1048576 names"},
		{"a[0-99]b[0-99]c[0-99]d[0-99]", "more than 1048576 names"},
		{long + "[1-2]", "longer than 255 bytes"},
		{"n[1-2]" + long, "longer than 255 bytes"},
		{"n[" + strings.Repeat("0", 300) + "1-2]", "padding wider than 255"},
	}
	for _, tc := range cases {
		got, err := Expand(tc.in)
		if err == nil {
			t.Errorf("Expand(%q) = %d names, want an error containing %q", tc.in, len(got), tc.phrase)
			continue
		}
		if !strings.Contains(err.Error(), tc.phrase) {
			t.Errorf("Expand(%q): %q, want it to contain %q", tc.in, err, tc.phrase)
		}
	}
}

// TestExpandHostlistLongPlainName checks that the 255-byte bound applies
// only to names generated from brackets.
func TestExpandHostlistLongPlainName(t *testing.T) {
	long := strings.Repeat("a", 300)
	if got, err := Expand(long + ",b"); err != nil || len(got) != 2 || got[0] != long {
		t.Errorf("plain long name: %d names, %v", len(got), err)
	}
	name := strings.Repeat("a", 250) + "[1-2]"
	if got, err := Expand(name); err != nil || len(got) != 2 || len(got[1]) != 251 {
		t.Errorf("%d-byte names: %q, %v", 251, got, err)
	}
}

func FuzzExpand(f *testing.F) {
	for _, tc := range hostlistGood {
		f.Add(tc.in)
	}
	for _, s := range []string{
		"", "a,,b", "n[1-3", "n1-3]", "n[]", "n[3-1]", "n[a-b]", "n[1[2]]",
		"n[0-99999999]", "n[0-1048575],x", "r[0-1023]n[0-1024]", "n[1-2]]x,y[",
		"],[", "a[1],b]", "a[1,2]]b,c", "n[01-2],[9-10]x[000-1]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := Expand(s)
		if err != nil {
			if names != nil {
				t.Errorf("Expand(%q) returned names with error %v", s, err)
			}
			return
		}
		if len(names) == 0 || len(names) > maxHostlistExpansion {
			t.Fatalf("Expand(%q) = %d names, want 1..%d", s, len(names), maxHostlistExpansion)
		}
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "[],") {
				t.Fatalf("Expand(%q) yields bad name %q", s, n)
			}
		}
	})
}

func TestCompress(t *testing.T) {
	cases := []struct {
		names []string
		want  string
	}{
		{[]string{"n0", "n1", "n2", "n5", "n7", "n8"}, "n[0-2,5,7-8]"},
		{[]string{"n3"}, "n3"},
		{[]string{"login", "n1", "n2", "x01", "x02"}, "login,n[1-2],x01,x02"},
		{[]string{"n5", "n3"}, "n[5,3]"},
		{nil, ""},
	}
	for _, c := range cases {
		got := Compress(c.names)
		if got != c.want {
			t.Errorf("Compress(%v) = %q, want %q", c.names, got, c.want)
		}
		if len(c.names) > 0 {
			back, err := Expand(got)
			if err != nil || !slices.Equal(back, c.names) {
				t.Errorf("Expand(%q) = %v, %v; want %v", got, back, err, c.names)
			}
		}
	}
}
