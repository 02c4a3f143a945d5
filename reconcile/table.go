package reconcile

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table lays out rows in columns two spaces apart: text to the left,
// amounts and counts (the columns in right) to the right, as a person reads
// a statement.
type table struct {
	right map[int]bool
	rows  [][]string
}

func newTable(header []string, right ...int) *table {
	t := &table{right: map[int]bool{}}
	for _, c := range right {
		t.right[c] = true
	}
	t.rows = append(t.rows, header)
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		line := make([]string, len(r))
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if t.right[i] {
				line[i] = pad + c
			} else {
				line[i] = c + pad
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(line, "  "), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
