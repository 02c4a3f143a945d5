package console

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The volume chart has axes: the currency named, amount ticks at 0, half
// and the tallest day (exact, with separators), and day ticks along the
// bottom; the bars sit on the day axis inside the plot.
func TestVolumeChartAxes(t *testing.T) {
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	vol := []volumeDay{{Day: from, Currency: "USD", Minor: 123456789}, {Day: from.AddDate(0, 0, 9), Currency: "USD", Minor: 5000}}
	charts := volumeCharts(vol, from, 30)
	if len(charts) != 1 {
		t.Fatalf("%d charts", len(charts))
	}
	c := charts[0]
	var ys []string
	for _, tk := range c.YTicks {
		ys = append(ys, tk.Label)
	}
	if got, want := strings.Join(ys, "|"), "0.00|617,283.94|1,234,567.89"; got != want {
		t.Errorf("amount ticks %s, want %s", got, want)
	}
	var xs []string
	for _, tk := range c.XTicks {
		xs = append(xs, tk.Label)
	}
	if got, want := strings.Join(xs, "|"), "03-01|03-06|03-11|03-16|03-21|03-26|03-30"; got != want {
		t.Errorf("day ticks %s, want %s", got, want)
	}
	if c.Max != "1,234,567.89 USD" {
		t.Errorf("tallest day %q", c.Max)
	}
	for _, b := range c.Bars {
		if b.X < c.PlotX || b.X+b.W > c.PlotX+c.PlotW || b.Y+b.H != c.PlotY+c.PlotH {
			t.Fatalf("bar %+v outside the plot %+v", b, c)
		}
	}

	// The page draws them: the currency, every tick's label, the axes.
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	data := balancesData{Charts: charts, From: from, To: from.AddDate(0, 0, 29)}
	if err := p.set["balances"].ExecuteTemplate(&out, "content", view{Data: data}); err != nil {
		t.Fatal(err)
	}
	svg := out.String()
	for _, want := range []string{`class="axis-title"`, `>USD</text>`, `>1,234,567.89</text>`, `>617,283.94</text>`, `>0.00</text>`, `>03-16</text>`, `>day (UTC)</text>`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
	if n := strings.Count(svg, `class="axis"`); n != 2 {
		t.Errorf("%d axes drawn, want 2", n)
	}
}
