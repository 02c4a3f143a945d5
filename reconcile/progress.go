package reconcile

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressBar draws "[#####     ]  52% 520000/1000000 entries" on a
// terminal, redrawing the line in place at most every progressInterval.
type progressBar struct {
	w    io.Writer
	last time.Time
	// drawn is set once something is on the line, so that done ends it.
	drawn bool
}

// newProgressBar returns a bar drawing on w, or nil when w is not a
// terminal: a redirected stderr, a pipe, a file or a buffer gets no
// carriage returns mixed into it.
func newProgressBar(w io.Writer) *progressBar {
	if !isTerminal(w) {
		return nil
	}
	return &progressBar{w: w}
}

// isTerminal reports whether w is a character device other than /dev/null
// (a terminal, without a dependency for the ioctl).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}

const (
	barWidth         = 30
	progressInterval = 100 * time.Millisecond
)

// update draws done out of total. The journal's entries are streamed first;
// once they are all checked, the balances and the bill lines are folded in
// PostgreSQL, which reports no progress: the bar says so rather than sit
// at 100% in silence.
func (b *progressBar) update(done, total int64) {
	if time.Since(b.last) < progressInterval && done < total {
		return
	}
	b.last = time.Now()
	fmt.Fprint(b.w, "\r"+progressLine(done, total))
	b.drawn = true
}

// progressLine is the text of the bar.
func progressLine(done, total int64) string {
	percent := int64(100)
	if total > 0 {
		percent = min(max(done*100/total, 0), 100)
	}
	filled := int(percent * barWidth / 100)
	line := fmt.Sprintf("[%s%s] %3d%% %d/%d entries",
		strings.Repeat("#", filled), strings.Repeat(" ", barWidth-filled), percent, done, total)
	if done >= total {
		line += "; checking balances and bill lines…"
	}
	return line
}

// done ends the bar's line.
func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
