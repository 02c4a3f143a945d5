package doctest

import (
	"strings"
	"testing"
)

const page = "Intro.\n\n<!-- doctest: skip -->\n```sh\nmake run\n```\n\n```\nlistening\n```\n\n" +
	"```sh\necho a\n```\n\n```json\n{\"a\":1}\n```\n\nProse.\n\n```sh\necho b\n```\n\nMore prose.\n\n```\nnot b's\n```\n"

func TestParse(t *testing.T) {
	blocks, err := Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d blocks: %+v", len(blocks), blocks)
	}
	if blocks[0].Script != "echo a" || !blocks[0].HasOut || blocks[0].Expected != `{"a":1}` {
		t.Errorf("block 0: %+v", blocks[0])
	}
	if blocks[1].Script != "echo b" || blocks[1].HasOut {
		t.Errorf("block 1 took an output across prose: %+v", blocks[1])
	}
	if _, err := Parse("```sh\necho\n"); err == nil {
		t.Error("an unclosed fence parsed")
	}
}

func TestPattern(t *testing.T) {
	for _, c := range []struct {
		expected, actual string
		match            bool
	}{
		{`{"cardNo":"crd_qm805d1i70um03mdvc2k","balance":100.00}`, `{"cardNo":"crd_abcdefghij0123456789","balance":100.00}`, true},
		{`{"cardNo":"crd_qm805d1i70um03mdvc2k","balance":100.00}`, `{"cardNo":"crd_abcdefghij0123456789","balance":100.0}`, false},
		{`{"cardNo":"crd_qm805d1i70um03mdvc2k"}`, `{"cardNo":"evt_abcdefghij0123456789"}`, false},
		{`{"shopNo":"SH8467592140","ts":"2026-11-23T07:03:34Z"}`, `{"shopNo":"SH0000000001","ts":"2027-01-02T00:00:00.5Z"}`, true},
		{"{\"a\":1,\n \"b\":2}", `{"a":1,"b":2}`, true},
		{`{"a":1,…}}`, `{"a":1,"b":{"c":2}}}`, true},
		{`{"a":1,…}}`, `{"a":2,"b":3}}`, false},
		{`{"last4":"9200","expiry":"11/29","code":1003}`, `{"last4":"1234","expiry":"01/31","code":1003}`, true},
		{`{"code":1003}`, `{"code":1004}`, false},
		{"hash 0f3a9c1d2e4b5a6978abcdef01234567", "hash 1111111111111111aaaa", true},
	} {
		re, err := Pattern(c.expected)
		if err != nil {
			t.Fatalf("%q: %v", c.expected, err)
		}
		if got := re.MatchString(c.actual); got != c.match {
			t.Errorf("Pattern(%q) on %q: %v, want %v", c.expected, c.actual, got, c.match)
		}
	}
}

func TestScriptAndSplit(t *testing.T) {
	blocks := []Block{{Script: "echo one"}, {Script: "echo two; echo err >&2"}}
	s := Script(blocks)
	if !strings.HasPrefix(s, "exec 2>&1\n") {
		t.Errorf("script: %q", s)
	}
	out := "one\n\n" + marker + "0\ntwo\nerr\n\n" + marker + "1\n"
	got := Split(out, 2)
	if len(got) != 2 || got[0] != "one\n" || got[1] != "two\nerr\n" {
		t.Errorf("split: %q", got)
	}
	if got := Split("one\n", 2); len(got) != 1 {
		t.Errorf("a stopped shell: %q", got)
	}
}

func TestRewrite(t *testing.T) {
	blocks, err := Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	got := Rewrite(page, blocks, map[int]string{0: "{\"a\":2}\n"})
	want := strings.Replace(page, "```json\n{\"a\":1}\n```", "```json\n{\"a\":2}\n```", 1)
	if got != want {
		t.Errorf("rewrite:\n%s\nwant\n%s", got, want)
	}
	if Rewrite(page, blocks, nil) != page {
		t.Error("a rewrite of nothing changed the page")
	}
}
