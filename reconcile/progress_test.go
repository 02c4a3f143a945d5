package reconcile

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

func TestProgressBarOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "pipe": w, "/dev/null": null, "file": file, "nil": nil} {
		if newProgressBar(w) != nil {
			t.Errorf("%s: a progress bar, want none off a terminal", name)
		}
	}
	// A pseudo-terminal's master side is a terminal as far as the bar can
	// tell (a character device that is not /dev/null).
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if newProgressBar(ptmx) == nil {
		t.Error("no progress bar on a terminal")
	}
}

func TestProgressBarDraws(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	b := &progressBar{w: &out}
	b.done()
	if out.Len() != 0 {
		t.Fatalf("done before any drawing wrote %q", out.String())
	}
	b.update(0, 1_000_000)
	b.update(10_000, 1_000_000) // within the interval: not drawn
	b.update(1_000_000, 1_000_000)
	b.done()
	lines := strings.Split(out.String(), "\r")
	want := []string{
		"",
		"[                              ]   0% 0/1000000 entries",
		"[##############################] 100% 1000000/1000000 entries; checking balances and bill lines…\n",
	}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("drew %q, want %q", lines, want)
	}
	for _, tt := range []struct {
		done, total int64
		want        string
	}{
		{520_000, 1_000_000, "[###############               ]  52% 520000/1000000 entries"},
		{0, 0, "[##############################] 100% 0/0 entries; checking balances and bill lines…"},
		{7, 5, "[##############################] 100% 7/5 entries; checking balances and bill lines…"},
	} {
		if got := progressLine(tt.done, tt.total); got != tt.want {
			t.Errorf("progressLine(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
}
