package console

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strings"

	"github.com/paygate/gateway/postings"
)

// Every amount on every page goes through money, so that all of them read
// the same way: the exact decimal string (never a float) with thousands
// separators, a minus sign for a negative amount, and a span whose classes
// keep it on one line (amt) and mark it when negative (neg).

// money is the template helper. v is minor units (int64, with the
// currency), a postings.Money (nil pointer: nothing), or a decimal string
// (string, json.Number, fmt.Stringer) with an optional currency after it.
func money(v any, cur ...string) (template.HTML, error) {
	code := ""
	if len(cur) > 0 {
		code = cur[0]
	}
	var text string
	switch x := v.(type) {
	case int64:
		text = minorText(x, code)
		code = ""
	case int:
		text = minorText(int64(x), code)
		code = ""
	case postings.Money:
		text, code = groupDecimal(postings.FormatMinor(x.Minor, x.Currency)), x.Currency.Code
	case *postings.Money:
		if x == nil {
			return "", nil
		}
		text, code = groupDecimal(postings.FormatMinor(x.Minor, x.Currency)), x.Currency.Code
	case string:
		text = groupDecimal(x)
	case json.Number:
		text = groupDecimal(string(x))
	case fmt.Stringer:
		text = groupDecimal(x.String())
	default:
		return "", fmt.Errorf("console: money of %T", v)
	}
	if code != "" {
		text += " " + code
	}
	class := "amt"
	if strings.HasPrefix(text, "-") {
		class += " neg"
	}
	return template.HTML(`<span class="` + class + `">` + template.HTMLEscapeString(text) + `</span>`), nil //nolint:gosec // G203: the text is escaped here, the class is one of two constants
}

// moneyText is an amount in minor units as plain text (the chart's
// labels, which are SVG text and titles rather than HTML).
func moneyText(minor int64, cur string) string { return minorText(minor, cur) }

// minorText formats minor units with the currency's exponent and
// separators; an unknown currency shows its minor units, saying so.
func minorText(minor int64, cur string) string {
	c, err := postings.LookupCurrency(cur)
	if err != nil {
		return fmt.Sprintf("%d (minor units) %s", minor, cur)
	}
	return groupDecimal(postings.FormatMinor(minor, c)) + " " + cur
}

// groupDecimal puts a comma between each three digits of a decimal
// string's whole part ("-1234567.89" → "-1,234,567.89"), working on the
// digits as text so that no amount goes through a float. Anything that is
// not a plain decimal is returned as it is.
func groupDecimal(s string) string {
	sign, rest := "", s
	if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
		sign, rest = rest[:1], rest[1:]
	}
	whole, frac, hasFrac := strings.Cut(rest, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || (hasFrac && strings.Trim(frac, "0123456789") != "") {
		return s
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// shortHashLen is how many hex digits of a hash a table shows at each end.
const shortHashLen = 8

// shortHash shows a long hash in a table cell as its first and last
// digits, on one line, with the whole value in the title (hover, and what
// a copy of the title gives); the entry's own page shows it whole.
func shortHash(h postings.Hash) template.HTML {
	full := h.String()
	shown := full
	if len(full) > 2*shortHashLen+1 {
		shown = full[:shortHashLen] + "…" + full[len(full)-shortHashLen:]
	}
	return template.HTML(`<code class="hash" title="` + template.HTMLEscapeString(full) + `">` + template.HTMLEscapeString(shown) + `</code>`) //nolint:gosec // G203: both values are escaped here
}
