package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
)

// screeningCorridors are the corridors screening is proven on: every named
// one (rules.NamedCorridors: SEPA and each local rail) and SWIFT ones of
// each shape (a free account number, an IBAN country, a required purpose,
// a currency that is local elsewhere).
func screeningCorridors(t *testing.T) []*rules.Corridor {
	t.Helper()
	out := rules.NamedCorridors()
	for _, k := range [][2]string{{"JP", "JPY"}, {"SA", "USD"}, {"KW", "KWD"}, {"US", "EUR"}, {"IN", "USD"}} {
		c, err := rules.DynamicFields(k[0], k[1])
		if err != nil {
			t.Fatal(err)
		}
		if c.Rail != rules.RailSWIFT {
			t.Fatalf("%s/%s is not a SWIFT corridor", k[0], k[1])
		}
		out = append(out, c)
	}
	return out
}

// corridorBeneficiary builds valid beneficiary details for a corridor from
// its dynamic fields: an IBAN made to its format with a correct checksum, a
// BIC of the country where one is required, sample values for the local
// bank codes. name is the beneficiary's name.
func corridorBeneficiary(t *testing.T, c *rules.Corridor, name string) map[string]string {
	t.Helper()
	b := map[string]string{"name": name, "country": c.Country}
	samples := map[string]string{
		"routing_number": "021000021", "account_type": "CHECKING", "ifsc": "HDFC0001234",
		"cnaps_code": "102100099996", "sort_code": "400515",
	}
	for _, f := range c.Fields {
		var v string
		switch {
		case f.Name == "bank_swift":
			if !f.Required {
				continue
			}
			v = "TEST" + c.Country + "2L"
		case f.Name == "account_no" && ibanFormatRE.MatchString(f.Format):
			v = ibanFromFormat(t, f.Format)
		case f.Name == "account_no" && c.Country == "GB":
			v = "31926819" // with sort_code
		case f.Name == "account_no":
			v = "123456789012"
		case f.Name == "bank_code" && c.Country == "HK":
			v = "004"
		case f.Name == "bank_code" && c.Country == "SG":
			v = "7171"
		default:
			v = samples[f.Name]
		}
		if v == "" || !regexp.MustCompile(f.Format).MatchString(v) {
			t.Fatalf("%s/%s: no sample for %s (format %s), %q", c.Country, c.Currency, f.Name, f.Format, v)
		}
		b[f.Name] = v
	}
	return b
}

// ibanFormatRE is an IBAN format as the corridors show it:
// ^DE[0-9]{2}[0-9]{8}[0-9]{10}$.
var ibanFormatRE = regexp.MustCompile(`^\^([A-Z]{2})\[0-9\]\{2\}((\[[A-Z0-9-]+\]\{[0-9]+\})+)\$$`)

// ibanFromFormat makes an IBAN of that format: digits and letters in each
// segment, and the check digits computed (ISO 13616 mod 97).
func ibanFromFormat(t *testing.T, format string) string {
	t.Helper()
	m := ibanFormatRE.FindStringSubmatch(format)
	var bban strings.Builder
	for _, seg := range regexp.MustCompile(`\[([A-Z0-9-]+)\]\{([0-9]+)\}`).FindAllStringSubmatch(m[2], -1) {
		n, _ := strconv.Atoi(seg[2])
		ch := "1"
		if seg[1] == "A-Z" {
			ch = "B"
		}
		bban.WriteString(strings.Repeat(ch, n))
	}
	var digits strings.Builder
	for _, r := range bban.String() + m[1] + "00" {
		if r >= 'A' && r <= 'Z' {
			digits.WriteString(strconv.Itoa(int(r-'A') + 10))
		} else {
			digits.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(digits.String(), 10)
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", m[1], check, bban.String())
}

// TestScreeningOnEveryCorridor: on every corridor and rail, a remittance to
// a listed beneficiary is REJECTED with everything refunded, end to end
// through POST /shop/remittance/create and the lifecycle worker, while the
// same remittance to another name goes on to the rail. The listed name is
// sent as listed and in a look-alike spelling (Cyrillic А, Е, О, Р, Т, Х),
// and another remittance mixes alphabets in one word.
func TestScreeningOnEveryCorridor(t *testing.T) {
	// Not parallel: it runs the remittance worker over every corridor; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	s := newTestServer(t, serverOptions{})
	ctx := context.Background()
	if _, err := s.l.Remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{
		{Name: "Petrov Export Trading LLC", List: "TEST", Ref: "17"},
	}); err != nil {
		t.Fatal(err)
	}
	corridors := screeningCorridors(t)
	currencies := map[string]bool{}
	for _, c := range corridors {
		currencies[c.Currency] = true
	}
	spec := merchant.Spec{}
	for cur := range currencies {
		spec.Currencies = append(spec.Currencies, cur)
	}
	sh := s.newShop(spec)
	for cur := range currencies {
		s.deposit(sh, cur, 100_000_000)
	}
	w := remittance.NewLifecycle(s.l.Remit, remittance.LifecycleConfig{Rail: &railsim.SimulatedRail{Manual: true, Now: time.Now}})

	const (
		plain  = "Petrov Export Trading"
		listed = "РЕТROV ЕХРОRТ ТRАDING" // Cyrillic Р Е Т Х О А: a whole-script look-alike
		mixed  = "Ivаn Sidorov"          // a Cyrillic а inside a Latin word
		clean  = "Ivan Sidorov"
	)
	for _, c := range corridors {
		t.Run(c.Country+"/"+c.Currency+"/"+string(c.Rail), func(t *testing.T) {
			before := s.fundingBalance(sh, c.Currency)
			extra := ""
			if c.PurposeRequired {
				extra = `,"purpose":"` + c.PurposeCodes[0].Code + `"`
			}
			ids := map[string]string{}
			for _, name := range []string{plain, listed, mixed, clean} {
				ben, err := json.Marshal(corridorBeneficiary(t, c, name))
				if err != nil {
					t.Fatal(err)
				}
				r := s.createRemittance(sh, remitBody(string(ben), `"10"`, c.Currency, extra))
				if r.Rail != string(c.Rail) {
					t.Fatalf("rail %s, want %s", r.Rail, c.Rail)
				}
				ids[name] = r.TxID
			}
			s.settle(w)
			for name, want := range map[string]struct{ status, reason string }{
				plain:  {"REJECTED", "sanctions screening: TEST:17 Petrov Export Trading LLC"},
				listed: {"REJECTED", "sanctions screening: TEST:17 Petrov Export Trading LLC"},
				mixed:  {"REJECTED", `sanctions screening: mixed scripts in one word (Cyrillic, Latin): "Ivаn"`},
				clean:  {"IN_FLIGHT", ""},
			} {
				q, a := s.queryRemittance(sh, ids[name])
				if q.Status != want.status || q.Reason != want.reason {
					t.Errorf("%q: %s", name, a.Data)
				}
			}
			// The rejected ones gave back amount and fee; the one in flight
			// holds its amount and fee.
			r, _ := s.queryRemittance(sh, ids[clean])
			if got, want := s.fundingBalance(sh, c.Currency), minus(t, before, "10", r.Fee.String()); got != want {
				t.Errorf("funding %s, want %s", got, want)
			}
		})
	}
}

// minus is a - b - c for decimal strings of one currency (test arithmetic).
func minus(t *testing.T, a, b, c string) string {
	t.Helper()
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	z, ok3 := new(big.Rat).SetString(c)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("amounts %q %q %q", a, b, c)
	}
	decimals := 0
	if i := strings.IndexByte(a, '.'); i >= 0 {
		decimals = len(a) - i - 1
	}
	return new(big.Rat).Sub(x, new(big.Rat).Add(y, z)).FloatString(decimals)
}
