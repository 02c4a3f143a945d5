// Package doctest runs the shell blocks of a Markdown page in order, in one
// shell, and compares each block's output with the block shown after it,
// so that a walkthrough cannot drift from what the gateway does
// (docs/walkthrough.md; issue 32 point 8).
//
// The page's conventions, which this package reads:
//
//   - A ```sh block is run. The fenced block that follows it, with only
//     blank lines between, is its expected output (stdout and stderr
//     together); a ```sh block without one is run and its output ignored.
//   - `<!-- doctest: skip -->` on the line before a ```sh block leaves it
//     out (the test does it another way: `make run` is the test's own
//     server).
//   - In an expected output, `…` stands for any text (a trimmed answer),
//     and what differs from run to run is matched by its shape, not its
//     value: ids (`crd_…`, `evt_…`, `SH` and ten digits), keys, times,
//     dates, the last four digits and expiry of a card, hashes and
//     fingerprints. Amounts, codes, messages and statuses are compared
//     as written.
package doctest

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// Block is one ```sh block with what it is expected to print.
type Block struct {
	Line     int    // the line of its opening fence, from 1
	Script   string // the commands
	Expected string // the output shown after it; "" when none is shown
	HasOut   bool   // an output block follows
	// outFrom and outTo are the lines (from 0, end excluded) of Expected
	// in the page, for Rewrite.
	outFrom, outTo int
}

const skipMark = "<!-- doctest: skip -->"

// Parse reads the runnable blocks of a Markdown page.
func Parse(page string) ([]Block, error) {
	var (
		blocks             []Block
		lines              = strings.Split(page, "\n")
		inFence            bool
		fenceLang          string
		start              int
		body               []string
		skipNext, skipThis bool
		pending            = -1 // the sh block waiting for its output, when only blank lines followed it
	)
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if !inFence {
			switch {
			case strings.HasPrefix(trimmed, "```"):
				inFence, fenceLang, start, body = true, strings.TrimPrefix(trimmed, "```"), i+1, nil
				skipThis, skipNext = skipNext, false
			case trimmed == skipMark:
				skipNext = true
			case trimmed != "":
				skipNext = false
				pending = -1
			}
			continue
		}
		if trimmed != "```" {
			body = append(body, l)
			continue
		}
		inFence = false
		text := strings.Join(body, "\n")
		switch {
		case fenceLang == "sh" && skipThis:
			pending = -1
		case fenceLang == "sh":
			blocks = append(blocks, Block{Line: start, Script: text})
			pending = len(blocks) - 1
		case pending >= 0:
			blocks[pending].Expected, blocks[pending].HasOut = text, true
			blocks[pending].outFrom, blocks[pending].outTo = start, i
			pending = -1
		default:
			pending = -1
		}
	}
	if inFence {
		return nil, fmt.Errorf("the fence opened on line %d is never closed", start)
	}
	return blocks, nil
}

// volatile are the shapes of what differs from run to run, each with the
// pattern that matches any value of that shape. Order matters: a longer
// shape before a shorter one that it contains.
var volatile = []struct{ find, match *regexp.Regexp }{
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`), regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`)},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}`), regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}`)},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}`), regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)},
	{regexp.MustCompile(`([0-9A-F]{2}:){7,}[0-9A-F]{2}`), regexp.MustCompile(`(?:[0-9A-F]{2}:)+[0-9A-F]{2}`)},
	{regexp.MustCompile(`\bSH\d{10}\b`), regexp.MustCompile(`SH\d{10}`)},
	{regexp.MustCompile(`127\.0\.0\.1:\d{2,5}`), regexp.MustCompile(`127\.0\.0\.1:\d{2,5}`)},
	{regexp.MustCompile(`\bwhsec_[A-Za-z0-9+/=]{16,}`), regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)},
	{regexp.MustCompile(`\bin \d+(\.\d+)?(µs|ms|s)\b`), regexp.MustCompile(`in \d+(?:\.\d+)?(?:µs|ms|s)`)},
	{regexp.MustCompile(`\b[a-z]{2,6}_[A-Za-z0-9_-]{8,}`), nil}, // prefix kept: see idPattern
	{regexp.MustCompile(`\b[0-9a-f]{16,}\b`), regexp.MustCompile(`[0-9a-f]+`)},
	{regexp.MustCompile(`"last4":\s*"\d{4}"`), regexp.MustCompile(`"last4":\s*"\d{4}"`)},
	{regexp.MustCompile(`"expiry":\s*"\d{2}/\d{2}"`), regexp.MustCompile(`"expiry":\s*"\d{2}/\d{2}"`)},
}

// idPattern matches an id of the same prefix as id ("crd_" …).
func idPattern(id string) string {
	prefix, _, _ := strings.Cut(id, "_")
	return regexp.QuoteMeta(prefix+"_") + `[A-Za-z0-9_-]+`
}

// Pattern is the regular expression an output must match for expected.
func Pattern(expected string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^\s*`)
	for i, part := range strings.Split(expected, "…") {
		if i > 0 {
			b.WriteString(`[\s\S]*?`)
		}
		b.WriteString(literal(part))
	}
	b.WriteString(`\s*$`)
	return regexp.Compile(b.String())
}

// literal is part as a pattern: its volatile values by shape, the rest as
// written, any run of white space as any white space (the page wraps long
// answers).
func literal(part string) string {
	type span struct {
		from, to int
		pattern  string
	}
	var spans []span
	taken := make([]bool, len(part))
	for _, v := range volatile {
		for _, m := range v.find.FindAllStringIndex(part, -1) {
			free := true
			for k := m[0]; k < m[1]; k++ {
				free = free && !taken[k]
			}
			if !free {
				continue
			}
			for k := m[0]; k < m[1]; k++ {
				taken[k] = true
			}
			p := idPattern(part[m[0]:m[1]])
			if v.match != nil {
				p = v.match.String()
			}
			spans = append(spans, span{m[0], m[1], p})
		}
	}
	var b strings.Builder
	at := 0
	for at < len(part) {
		next := -1
		for j, s := range spans {
			if s.from == at {
				next = j
			}
		}
		if next >= 0 {
			b.WriteString("(?:" + spans[next].pattern + ")")
			at = spans[next].to
			continue
		}
		end := len(part)
		for _, s := range spans {
			if s.from > at && s.from < end {
				end = s.from
			}
		}
		b.WriteString(plain(part[at:end]))
		at = end
	}
	return b.String()
}

// plain quotes text, with white space loosened.
func plain(text string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Split(bufio.ScanRunes)
	space := false
	for sc.Scan() {
		r := sc.Text()
		if strings.TrimSpace(r) == "" {
			space = true
			continue
		}
		if space {
			b.WriteString(`\s*`)
			space = false
		}
		b.WriteString(regexp.QuoteMeta(r))
	}
	if space {
		b.WriteString(`\s*`)
	}
	return b.String()
}

// Script is the shell script of blocks: each block, then a line that marks
// its end on the shared output, so that Split can cut the output by block.
func Script(blocks []Block) string {
	var b strings.Builder
	b.WriteString("exec 2>&1\n")
	for i, bl := range blocks {
		fmt.Fprintf(&b, "%s\nprintf '\\n%s%d\\n'\n", bl.Script, marker, i)
	}
	return b.String()
}

const marker = "@@doctest-block-end-"

// Split cuts the output of Script into one output per block (fewer when
// the shell stopped early).
func Split(output string, n int) []string {
	outs := make([]string, 0, n)
	rest := output
	for i := range n {
		m := fmt.Sprintf("\n%s%d\n", marker, i)
		before, after, ok := strings.Cut(rest, m)
		if !ok {
			outs = append(outs, rest)
			break
		}
		outs = append(outs, before)
		rest = after
	}
	return outs
}

// Rewrite is page with the expected output of each block in update
// replaced by out[block]: the page's answers brought up to date after a
// change, for a person to read in the diff before committing
// (GATEWAY_UPDATE_DOCS=1 on the test that runs the page).
func Rewrite(page string, blocks []Block, update map[int]string) string {
	lines := strings.Split(page, "\n")
	var b strings.Builder
	at := 0
	for i, bl := range blocks {
		out, ok := update[i]
		if !ok || !bl.HasOut {
			continue
		}
		b.WriteString(strings.Join(lines[at:bl.outFrom], "\n"))
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(out, "\n"))
		b.WriteString("\n")
		at = bl.outTo
	}
	b.WriteString(strings.Join(lines[at:], "\n"))
	return b.String()
}
