package console

import (
	"math"
	"strconv"
	"time"
)

// The daily volume chart: a bar per day and currency, drawn as SVG by the
// server (html/template writes the numbers; presentation attributes are
// not styles, so the strict CSP lets them through). A table under the
// chart gives the same numbers for those who do not see it.

type chart struct {
	Currency string
	Max      string // the tallest bar, formatted
	Bars     []bar
	Width    int
	Height   int
}

type bar struct {
	X, Y, W, H int
	Label      string // the day and amount, the bar's <title>
}

const (
	chartHeight = 120
	barWidth    = 14
	barGap      = 4
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
		c := chart{Currency: cur, Max: moneyText(maxV, cur), Width: days * (barWidth + barGap), Height: chartHeight}
		for i, m := range perDay {
			h := 0
			if maxV > 0 {
				h = barHeight(m, maxV)
				if m > 0 && h == 0 {
					h = 1
				}
			}
			c.Bars = append(c.Bars, bar{X: i * (barWidth + barGap), Y: chartHeight - h, W: barWidth, H: h,
				Label: from.AddDate(0, 0, i).Format("2006-01-02") + ": " + moneyText(m, cur) + " (" + strconv.Itoa(i+1) + "/" + strconv.Itoa(days) + ")"})
		}
		out = append(out, c)
	}
	return out
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
