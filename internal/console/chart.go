package console

import (
	"math"
	"strconv"
	"time"

	"github.com/paygate/gateway/postings"
)

// The daily volume chart: a bar per day and currency, drawn as SVG by the
// server (html/template writes the numbers; presentation attributes are
// not styles, so the strict CSP lets them through). It has axes: the
// amount on the left, with ticks at 0, half the tallest day and the
// tallest day, in the currency named above them; the days along the
// bottom, a tick every dayTickEvery days. A table under the chart gives
// the same numbers for those who do not see it.

type chart struct {
	Currency string
	Max      string // the tallest bar, formatted
	Bars     []bar
	Width    int // the whole drawing
	Height   int
	// The plot's box inside the drawing: the axes are its left and bottom
	// edges, the tick labels outside it.
	PlotX, PlotY, PlotW, PlotH int
	XTicks                     []tick // days
	YTicks                     []tick // amounts
	MidX                       int    // where the day axis' name is centred
}

type bar struct {
	X, Y, W, H int
	Label      string // the day and amount, the bar's <title>
}

// tick is one mark on an axis: where it is and its label.
type tick struct {
	X, Y  int
	Label string
}

const (
	chartHeight  = 120 // the plot's height
	barWidth     = 14
	barGap       = 4
	axisLeft     = 96 // room for the amount labels
	axisTop      = 22 // room for the currency
	axisBottom   = 34 // room for the day labels and the axis' name
	dayTickEvery = 5
)

// volumeCharts makes one chart per currency over days days from from.
func volumeCharts(vol []volumeDay, from time.Time, days int) []chart {
	var out []chart
	for _, cur := range sortedCurrencies(vol) {
		perDay := make([]int64, days)
		for _, v := range vol {
			if v.Currency != cur {
				continue
			}
			i := int(v.Day.Sub(from) / (24 * time.Hour))
			if i >= 0 && i < days {
				perDay[i] += v.Minor
			}
		}
		var maxV int64
		for _, m := range perDay {
			maxV = max(maxV, m)
		}
		plotW := days * (barWidth + barGap)
		c := chart{Currency: cur, Max: moneyText(maxV, cur), PlotX: axisLeft, PlotY: axisTop, PlotW: plotW, PlotH: chartHeight,
			Width: axisLeft + plotW + barGap, Height: axisTop + chartHeight + axisBottom, MidX: axisLeft + plotW/2}
		for i, m := range perDay {
			h := 0
			if maxV > 0 {
				h = barHeight(m, maxV)
				if m > 0 && h == 0 {
					h = 1
				}
			}
			day := from.AddDate(0, 0, i)
			x := axisLeft + i*(barWidth+barGap)
			c.Bars = append(c.Bars, bar{X: x, Y: axisTop + chartHeight - h, W: barWidth, H: h,
				Label: day.Format("2006-01-02") + ": " + moneyText(m, cur) + " (" + strconv.Itoa(i+1) + "/" + strconv.Itoa(days) + ")"})
			if i%dayTickEvery == 0 || i == days-1 {
				c.XTicks = append(c.XTicks, tick{X: x + barWidth/2, Y: axisTop + chartHeight, Label: day.Format("01-02")})
			}
		}
		c.YTicks = amountTicks(maxV, cur)
		out = append(out, c)
	}
	return out
}

// amountTicks marks 0, half the tallest day and the tallest day on the
// amount axis, in the currency's units with separators (exact: halving
// minor units is integer arithmetic, and the height is barHeight's).
func amountTicks(maxV int64, cur string) []tick {
	label := func(m int64) string {
		c, err := postings.LookupCurrency(cur)
		if err != nil {
			return strconv.FormatInt(m, 10)
		}
		return groupDecimal(postings.FormatMinor(m, c))
	}
	ticks := []tick{{X: axisLeft, Y: axisTop + chartHeight, Label: label(0)}}
	if maxV <= 0 {
		return ticks
	}
	for _, m := range []int64{maxV / 2, maxV} {
		if m > 0 {
			ticks = append(ticks, tick{X: axisLeft, Y: axisTop + chartHeight - barHeight(m, maxV), Label: label(m)})
		}
	}
	return ticks
}

// barHeight scales m of maxV to pixels in integers (a height, not money),
// without overflowing near the int64 bound.
func barHeight(m, maxV int64) int {
	const top = chartHeight - 10
	if maxV <= math.MaxInt64/top {
		return int(m * top / maxV)
	}
	return int(m / (maxV / top))
}
