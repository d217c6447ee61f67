package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// A docCommand is an optsched command line of a shell block of the
// README or a guide.
type docCommand struct {
	where string // file:line
	args  []string
}

// docCommands returns the optsched command lines of the ```sh blocks of
// README.md and docs/*.md: continuation lines joined, each pipeline and
// && list split into its commands, comments, redirections and the
// environment assignments before a command dropped, ${VAR} made "1".
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	var out []docCommand
	vars := regexp.MustCompile(`\$\{?\w+\}?`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in, line, start, acc := false, 0, 0, ""
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			line++
			text := sc.Text()
			switch {
			case strings.HasPrefix(text, "```sh"):
				in = true
				continue
			case strings.HasPrefix(text, "```"):
				in = false
				continue
			case !in:
				continue
			}
			if acc == "" {
				start = line
			}
			if s, ok := strings.CutSuffix(strings.TrimRight(text, " "), `\`); ok {
				acc += s + " "
				continue
			}
			full := vars.ReplaceAllString(acc+text, "1")
			acc = ""
			for _, cmd := range regexp.MustCompile(`&&|\||;`).Split(full, -1) {
				words := shellWords(cmd)
				for len(words) > 0 && strings.Contains(words[0], "=") {
					words = words[1:] // VAR=value before the command
				}
				if len(words) == 0 || filepath.Base(words[0]) != "optsched" {
					continue
				}
				out = append(out, docCommand{where: filepath.Base(f) + ":" + strconv.Itoa(start), args: words[1:]})
			}
		}
	}
	return out
}

// shellWords splits a command as sh would for these examples: quotes
// group, a word starting with # ends the line, and redirections (>, >>,
// <, 2>) drop with their target.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			i = len(s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == ">" || w == ">>" || w == "<" || w == "2>" {
			i++ // and its target
			continue
		}
		if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			continue
		}
		out = append(out, w)
	}
	return out
}

// TestDocCommandsParse: every optsched command in a shell block of the
// README and the guides names a command that exists, with flags it takes
// and values of their type, the positional arguments it accepts and the
// flags it requires — so that no example goes stale as flags change.
func TestDocCommandsParse(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("only %d optsched commands found in the docs' shell blocks", len(cmds))
	}
	for _, dc := range cmds {
		root := newRootCmd(&streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		c, rest, err := root.Find(dc.args)
		if err != nil || c == root {
			t.Errorf("%s: optsched %s: no such command (%v)", dc.where, strings.Join(dc.args, " "), err)
			continue
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: optsched %s: %v", dc.where, strings.Join(dc.args, " "), err)
			continue
		}
		if c.Args != nil {
			if err := c.Args(c, c.Flags().Args()); err != nil {
				t.Errorf("%s: optsched %s: %v", dc.where, strings.Join(dc.args, " "), err)
			}
		}
		if err := c.ValidateRequiredFlags(); err != nil {
			t.Errorf("%s: optsched %s: %v", dc.where, strings.Join(dc.args, " "), err)
		}
	}
}

// docBlock returns the lines of the fenced block after the line of file
// that contains marker.
func docBlock(t *testing.T, file, marker string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s: no %q", file, marker)
	}
	_, block, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatalf("%s: no block after %q", file, marker)
	}
	block, _, _ = strings.Cut(block, "```")
	return strings.Split(strings.TrimRight(block, "\n"), "\n")
}

// elapsed hides the one figure of a solve's table that changes from run
// to run.
var elapsed = regexp.MustCompile(`elapsed [0-9.]+ ms`)

// TestReadmeMakeRunOutput: the README shows what `make run` prints —
// solve -o table on the shipped example — line for line, but for the
// elapsed time.
func TestReadmeMakeRunOutput(t *testing.T) {
	want := docBlock(t, "../../README.md", "## What `make run` prints")
	code, out, errs := optsched(t, "", "solve", "-o", "table", "../../instances/example-window.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, the README shows %d:\n%s", len(got), len(want), out)
	}
	for i := range got {
		if g, w := elapsed.ReplaceAllString(got[i], "elapsed X ms"), elapsed.ReplaceAllString(want[i], "elapsed X ms"); strings.TrimRight(g, " ") != strings.TrimRight(w, " ") {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
}

// TestReproducingSWFOutput: the first two lines docs/reproducing.md shows
// for KTH SP2 under easy are what simulate prints.
func TestReproducingSWFOutput(t *testing.T) {
	b, err := os.ReadFile("../../docs/reproducing.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(l, "    trace instances/traces/KTH"); ok {
			want = append(want, "trace instances/traces/KTH"+s)
		} else if s, ok := strings.CutPrefix(l, "    cluster: "); ok && len(want) == 1 {
			want = append(want, "cluster: "+s)
		}
	}
	if len(want) != 2 {
		t.Fatalf("docs/reproducing.md shows %d of the two lines", len(want))
	}
	code, out, errs := optsched(t, "", "simulate", "--trace", "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz", "--policy", "easy")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := strings.Split(strings.ReplaceAll(out, "../../instances", "instances"), "\n")
	for i, w := range want {
		if got[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, got[i], w)
		}
	}
}

// A docTranscript is a fenced block of the README or a guide that shows
// an optsched command ("$ optsched ...") and what it prints.
type docTranscript struct {
	where string // file:line
	args  []string
	want  []string
}

// docTranscripts returns the transcripts of README.md and docs/*.md.
func docTranscripts(t *testing.T) []docTranscript {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docTranscript
	for _, f := range append([]string{"../../README.md"}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		open, plain := false, false // in a fenced block; one without a language
		var cur *docTranscript
		for i, l := range lines {
			switch {
			case strings.HasPrefix(l, "```"):
				if cur != nil {
					out = append(out, *cur)
					cur = nil
				}
				open = !open
				plain = open && l == "```"
			case plain && strings.HasPrefix(l, "$ optsched "):
				if cur != nil {
					out = append(out, *cur)
				}
				cur = &docTranscript{where: filepath.Base(f) + ":" + strconv.Itoa(i+1), args: shellWords(strings.TrimPrefix(l, "$ optsched "))}
			case cur != nil:
				cur.want = append(cur.want, l)
			}
		}
	}
	return out
}

// msFigure hides the timings of a transcript, which change from run to run.
var msFigure = regexp.MustCompile(`[0-9.]+ ms`)

// TestDocTranscripts runs every "$ optsched ..." transcript of the README
// and the guides, in the folder its files come from, and compares what
// the command prints (stdout and stderr) with the transcript line for
// line, the timings aside. A transcript whose files the test does not
// know fails: add its folder to transcriptDirs.
func TestDocTranscripts(t *testing.T) {
	transcriptDirs := map[string]func(t *testing.T) string{
		// The PBS documents of the sample plan.
		"pbs plan": func(*testing.T) string { return "../../model/pbs/testdata" },
		// The example window and the results of docs/examples.
		"validate example-window.json": func(t *testing.T) string {
			dir := t.TempDir()
			srcs, err := filepath.Glob("../../docs/examples/*.json")
			if err != nil || len(srcs) == 0 {
				t.Fatalf("docs/examples: %v", err)
			}
			for _, src := range append(srcs, example) {
				b, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return dir
		},
		// bad.json: the example window with a job of 0 nodes.
		"solve bad.json": func(t *testing.T) string {
			dir := t.TempDir()
			b, err := os.ReadFile(example)
			if err != nil {
				t.Fatal(err)
			}
			bad := strings.Replace(string(b), `{"id": "d", "nodes": 1,`, `{"id": "d", "nodes": 0,`, 1)
			if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		},
	}
	ts := docTranscripts(t)
	if len(ts) < 2 {
		t.Fatalf("only %d transcripts found", len(ts))
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		key := strings.Join(tr.args[:min(2, len(tr.args))], " ")
		dirOf, ok := transcriptDirs[key]
		if !ok {
			t.Errorf("%s: transcript of optsched %s: no folder for its files in transcriptDirs", tr.where, key)
			continue
		}
		dir := dirOf(t)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
		t.Run(tr.where, func(t *testing.T) {
			t.Chdir(dir)
			_, out, errs := optsched(t, "", tr.args...)
			got := strings.Split(strings.TrimRight(out+errs, "\n"), "\n")
			want := tr.want
			for len(want) > 0 && want[len(want)-1] == "" {
				want = want[:len(want)-1]
			}
			if len(got) != len(want) {
				t.Fatalf("%d lines, the transcript shows %d:\n%s", len(got), len(want), out+errs)
			}
			for i := range got {
				if g, w := msFigure.ReplaceAllString(got[i], "X ms"), msFigure.ReplaceAllString(want[i], "X ms"); g != w {
					t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
				}
			}
		})
	}
}

// headingSlug is GitHub's anchor of a Markdown heading: lower case,
// punctuation but '-' and '_' dropped, spaces made '-'.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headings returns the headings of a Markdown file (outside fenced blocks).
func headings(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fenced := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(l, "#") {
			out = append(out, strings.TrimLeft(l, "# "))
		}
	}
	return out
}

// TestDocPointers: every relative link of the README and the guides names
// a file that exists and, with an anchor, a heading of it; every pointer
// written as FILE.md, "Section" — in the docs and in the command's help —
// names a file whose heading starts with Section (issue 36: pointers to
// sections the README no longer had).
func TestDocPointers(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	goFiles, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	named := regexp.MustCompile(`((?:docs/)?[\w.-]+\.md),? \\?"([^"\\]+)\\?"`)
	checked := 0
	for _, f := range append(append([]string{"../../README.md"}, files...), goFiles...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(f)
		resolve := func(target string) string {
			if strings.HasSuffix(f, ".go") || strings.HasPrefix(target, "docs/") {
				return filepath.Join("../..", target)
			}
			return filepath.Join(dir, target)
		}
		if strings.HasSuffix(f, ".md") {
			for _, m := range link.FindAllStringSubmatch(string(b), -1) {
				target, anchor := m[1], strings.TrimPrefix(m[2], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path := f
				if target != "" {
					path = filepath.Join(dir, target)
				}
				st, err := os.Stat(path)
				if err != nil {
					t.Errorf("%s: link to %s: %v", filepath.Base(f), m[1], err)
					continue
				}
				checked++
				if anchor == "" || st.IsDir() {
					continue
				}
				found := false
				for _, h := range headings(t, path) {
					found = found || headingSlug(h) == anchor
				}
				if !found {
					t.Errorf("%s: link %s%s: no such heading", filepath.Base(f), m[1], m[2])
				}
			}
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			path := resolve(m[1])
			if _, err := os.Stat(path); err != nil {
				continue // a file name in prose, not a pointer
			}
			checked++
			found := false
			for _, h := range headings(t, path) {
				found = found || strings.HasPrefix(strings.ToLower(strings.Trim(h, "*`")), strings.ToLower(m[2]))
			}
			if !found {
				t.Errorf("%s: %s, %q: no such heading", filepath.Base(f), m[1], m[2])
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d pointers checked", checked)
	}
}
