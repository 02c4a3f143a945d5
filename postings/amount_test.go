package postings

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

var (
	usd = MustCurrency("USD")
	jpy = MustCurrency("JPY")
	kwd = MustCurrency("KWD")
	eur = MustCurrency("EUR")
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		give    string
		cur     Currency
		want    int64
		wantErr string // substring of the message; "" means success
	}{
		{give: "12.34", cur: usd, want: 1234},
		{give: "12.5", cur: usd, want: 1250},
		{give: "12.50", cur: usd, want: 1250},
		{give: "12.500", cur: usd, want: 1250}, // trailing zeros are not decimals
		{give: "100", cur: usd, want: 10000},
		{give: "0.01", cur: usd, want: 1},
		{give: "1e2", cur: usd, want: 10000},
		{give: "1E-2", cur: usd, want: 1},
		{give: "1.005", cur: usd, wantErr: "at most 2 decimals"},
		{give: "0.001", cur: usd, wantErr: "at most 2 decimals"},
		{give: "100", cur: jpy, want: 100},
		{give: "100.0", cur: jpy, want: 100},
		{give: "100.5", cur: jpy, wantErr: "JPY has no decimals"},
		{give: "1.234", cur: kwd, want: 1234},
		{give: "1.2345", cur: kwd, wantErr: "at most 3 decimals"},
		{give: "0", cur: usd, wantErr: "greater than zero"},
		{give: "0.00", cur: usd, wantErr: "greater than zero"},
		{give: "-0", cur: usd, wantErr: "greater than zero"},
		{give: "-0.00", cur: usd, wantErr: "greater than zero"},
		{give: "-1", cur: usd, wantErr: "must be positive"},
		{give: "NaN", cur: usd, wantErr: "not a decimal number"},
		{give: "Infinity", cur: usd, wantErr: "not a decimal number"},
		{give: "inf", cur: usd, wantErr: "not a decimal number"},
		{give: "", cur: usd, wantErr: "not a decimal number"},
		{give: " 1", cur: usd, wantErr: "not a decimal number"},
		{give: "+1", cur: usd, wantErr: "not a decimal number"},
		{give: "01", cur: usd, wantErr: "not a decimal number"},
		{give: "1.", cur: usd, wantErr: "not a decimal number"},
		{give: ".5", cur: usd, wantErr: "not a decimal number"},
		{give: "1,5", cur: usd, wantErr: "not a decimal number"},
		{give: "0x10", cur: usd, wantErr: "not a decimal number"},
		{give: "1e", cur: usd, wantErr: "not a decimal number"},
		{give: "10000000000000.00", cur: usd, want: AmountMinorMax},
		{give: "10000000000000.01", cur: usd, wantErr: "exceeds the maximum"},
		{give: "1e999999999", cur: usd, wantErr: "out of range"},
		{give: "1e99999", cur: usd, wantErr: "exceeds the maximum"},
		{give: "1e-999999999", cur: usd, wantErr: "out of range"},
		{give: "1e-99999", cur: usd, wantErr: "at most 2 decimals"},
		{give: "99999999999999999999999999999999999999", cur: usd, wantErr: "exceeds the maximum"},
		{give: strings.Repeat("9", 41), cur: usd, wantErr: "too long"},
		{give: "1000000000000000", cur: jpy, want: AmountMinorMax},
		{give: "1000000000000001", cur: jpy, wantErr: "exceeds the maximum"},
	}
	for _, tt := range tests {
		t.Run(tt.cur.Code+"/"+tt.give, func(t *testing.T) {
			got, err := ParseAmount(tt.give, tt.cur)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseAmount(%q) error: %v", tt.give, err)
				}
				if got != tt.want {
					t.Fatalf("ParseAmount(%q) = %d, want %d", tt.give, got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseAmount(%q) = %d, want an error containing %q", tt.give, got, tt.wantErr)
			}
			e := AsError(err)
			if e.Code != EINVALID || e.Field != "amount" {
				t.Fatalf("error %v: want EINVALID naming field amount", err)
			}
			if !strings.Contains(e.Message, tt.wantErr) {
				t.Fatalf("error %q does not contain %q", e.Message, tt.wantErr)
			}
		})
	}
}

// 0.1 + 0.2 is exactly 0.3 in minor units, as it never is in binary floats.
func TestAmountArithmeticIsExact(t *testing.T) {
	a, err := ParseAmount("0.1", usd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseAmount("0.2", usd)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseAmount("0.3", usd)
	if err != nil {
		t.Fatal(err)
	}
	if a+b != c {
		t.Fatalf("0.1 + 0.2 = %d minor units, want %d", a+b, c)
	}
	if got := FormatMinor(a+b, usd); got != "0.30" {
		t.Fatalf("FormatMinor = %q, want 0.30", got)
	}
}

func TestFormatMinor(t *testing.T) {
	tests := []struct {
		give int64
		cur  Currency
		want string
	}{
		{0, usd, "0.00"},
		{1, usd, "0.01"},
		{-5, usd, "-0.05"},
		{1234, usd, "12.34"},
		{-123456, usd, "-1234.56"},
		{100, jpy, "100"},
		{-7, jpy, "-7"},
		{1, kwd, "0.001"},
		{1234567, kwd, "1234.567"},
		{-9223372036854775808, usd, "-92233720368547758.08"},
		{9223372036854775807, usd, "92233720368547758.07"},
	}
	for _, tt := range tests {
		if got := FormatMinor(tt.give, tt.cur); got != tt.want {
			t.Errorf("FormatMinor(%d, %s) = %q, want %q", tt.give, tt.cur.Code, got, tt.want)
		}
	}
}

func TestParseSignedAmount(t *testing.T) {
	for give, want := range map[string]int64{"0": 0, "-0": 0, "-1.25": -125, "3": 300} {
		got, err := ParseSignedAmount(give, usd)
		if err != nil || got != want {
			t.Errorf("ParseSignedAmount(%q) = %d, %v; want %d", give, got, err, want)
		}
	}
	if _, err := ParseSignedAmount("-1.255", usd); err == nil {
		t.Error("ParseSignedAmount(-1.255) accepted three decimals")
	}
}

// FuzzParseAmount checks, for any input, that the parser either refuses with
// an EINVALID error naming the amount, or returns a value that is positive,
// bounded, equal to what apd computes independently, and that formats back
// to text parsing to the same value.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"0.1", "0.2", "1.005", "100", "-0", "1e2", "1E-2", "NaN",
		"99999999999999999999", "12.50", "0.001", "1e999999999", "-1", "1.", "00.1"} {
		f.Add(s, "USD")
	}
	f.Add("100", "JPY")
	f.Add("1.234", "KWD")
	f.Fuzz(func(t *testing.T, text, code string) {
		cur, err := LookupCurrency(code)
		if err != nil {
			return
		}
		got, err := ParseAmount(text, cur)
		if err != nil {
			e := AsError(err)
			if e.Code != EINVALID || e.Field != "amount" {
				t.Fatalf("ParseAmount(%q) error %v is not EINVALID on amount", text, err)
			}
			return
		}
		if got <= 0 || got > AmountMinorMax {
			t.Fatalf("ParseAmount(%q) = %d, outside 1..max", text, got)
		}
		// Independent check: the text, scaled by 10^exp with apd, equals got.
		d, _, err := apd.NewFromString(text)
		if err != nil {
			t.Fatalf("accepted %q that apd cannot parse: %v", text, err)
		}
		want := apd.New(got, -cur.Exponent)
		if d.Cmp(want) != 0 {
			t.Fatalf("ParseAmount(%q) = %d minor units, but the text is %s", text, got, d.String())
		}
		back, err := ParseAmount(FormatMinor(got, cur), cur)
		if err != nil || back != got {
			t.Fatalf("round trip of %d: %d, %v", got, back, err)
		}
	})
}

func TestConvertRoundsTinyResultsUp(t *testing.T) {
	usd, eur := MustCurrency("USD"), MustCurrency("EUR")
	// 1 cent × 0.05 = 0.05 cent: paying rounds up to 1, receiving to 0 (refused).
	if got, err := Convert(1, usd, eur, MustRate("0.05"), RoundUp); err != nil || got != 1 {
		t.Fatalf("RoundUp: %d %v", got, err)
	}
	if _, err := Convert(1, usd, eur, MustRate("0.05"), RoundDown); err == nil {
		t.Fatal("RoundDown of 0.05 cent must be refused as zero")
	}
}

func TestConvert(t *testing.T) {
	tests := []struct {
		minor    int64
		from, to Currency
		rate     string
		rounding Rounding
		want     int64
	}{
		{10000, usd, eur, "0.92", RoundDown, 9200},
		{1, usd, eur, "0.92", RoundUp, 1},      // 0.0092 EUR rounds up to 0.01
		{333, usd, eur, "0.5", RoundDown, 166}, // 1.665 → 1.66
		{333, usd, eur, "0.5", RoundUp, 167},   // 1.665 → 1.67
		{10000, usd, jpy, "149.85", RoundDown, 14985},
		{1000, jpy, usd, "0.006673", RoundDown, 667}, // 6.673 USD → 6.67
		{1000, jpy, usd, "0.006673", RoundUp, 668},
		{1000, usd, kwd, "0.3071", RoundDown, 3071},
	}
	for _, tt := range tests {
		got, err := Convert(tt.minor, tt.from, tt.to, MustRate(tt.rate), tt.rounding)
		if err != nil || got != tt.want {
			t.Errorf("Convert(%d %s→%s @%s) = %d, %v; want %d", tt.minor, tt.from.Code, tt.to.Code, tt.rate, got, err, tt.want)
		}
	}
	if _, err := Convert(1, usd, eur, MustRate("0.001"), RoundDown); err == nil {
		t.Error("Convert accepted an amount that converts to zero")
	}
}

func TestRates(t *testing.T) {
	for _, bad := range []string{"0", "-1", "abc", "1e10", "0.0000000001", "1.0000000000000000000001"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	r, err := ApplySpread(MustRate("0.92"), 50, RoundDown)
	if err != nil || r.String() != "0.9154" {
		t.Fatalf("ApplySpread(0.92, 50bps) = %s, %v; want 0.9154", r, err)
	}
}

func TestMoneyJSON(t *testing.T) {
	b, err := Money{Minor: 1250, Currency: usd}.MarshalJSON()
	if err != nil || string(b) != "12.50" {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	if _, err := strconv.ParseFloat(string(b), 64); err != nil {
		t.Fatalf("not a JSON number: %s", b)
	}
}
