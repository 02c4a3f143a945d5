package rules

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

func TestCountryTable(t *testing.T) {
	if n := len(countryCodes); n != 250 {
		t.Errorf("country table has %d codes, want the 249 of ISO 3166-1 plus XK", n)
	}
	for _, c := range []string{"DE", "US", "IN", "CN", "AE", "JE", "XK", "AQ", "SS", "BQ", "CW", "SX"} {
		if !IsCountryCode(c) {
			t.Errorf("%s refused", c)
		}
	}
	for _, c := range []string{"", "D", "DEU", "de", "UK", "EU", "EL", "ZZ", "AN", "YU", "\x00\x00"} {
		if IsCountryCode(c) {
			t.Errorf("%q accepted", c)
		}
	}
	for _, c := range sepaCountries {
		if !IsCountryCode(c) {
			t.Errorf("SEPA country %s not in the table", c)
		}
		if _, ok := ibanPrefixFor(c); !ok {
			t.Errorf("SEPA country %s has no IBAN", c)
		}
	}
}

// allCorridors returns the named corridors and a sample of SWIFT ones.
func allCorridors(t *testing.T) []*Corridor {
	t.Helper()
	var out []*Corridor
	keys := make([]corridorKey, 0, len(corridorTable))
	for k := range corridorTable {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].country+keys[i].currency < keys[j].country+keys[j].currency })
	for _, k := range keys {
		c, err := DynamicFields(k.country, k.currency)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		out = append(out, c)
	}
	for _, k := range [][2]string{{"JP", "JPY"}, {"DE", "USD"}, {"AE", "USD"}, {"IN", "USD"}, {"BR", "BRL"}, {"US", "EUR"}, {"CN", "USD"}, {"JE", "GBP"}} {
		c, err := DynamicFields(k[0], k[1])
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		out = append(out, c)
	}
	return out
}

func TestCorridorShapes(t *testing.T) {
	tests := []struct {
		country, currency string
		rail              Rail
		required          []string // fields with Required
		optional          []string // fields without
		purposeRequired   bool
		purposeSample     string
	}{
		{"DE", "EUR", RailSEPA, []string{"account_no"}, []string{"bank_swift"}, false, "GDDS"},
		{"FR", "EUR", RailSEPA, []string{"account_no"}, []string{"bank_swift"}, false, "SUPP"},
		{"GB", "EUR", RailSEPA, []string{"account_no"}, []string{"bank_swift"}, false, "OTHR"},
		{"CH", "EUR", RailSEPA, []string{"account_no"}, []string{"bank_swift"}, false, "SCVE"},
		{"JE", "EUR", RailSEPA, []string{"account_no"}, []string{"bank_swift"}, false, "GDDS"},
		{"GB", "GBP", RailLocal, []string{"account_no"}, []string{"bank_swift", "sort_code"}, false, "GDDS"},
		{"US", "USD", RailLocal, []string{"account_no", "routing_number", "account_type"}, []string{"bank_swift"}, false, "SUPP"},
		{"IN", "INR", RailLocal, []string{"account_no", "ifsc"}, []string{"bank_swift"}, true, "P0802"},
		{"CN", "CNY", RailLocal, []string{"account_no", "cnaps_code"}, []string{"bank_swift"}, true, "GOODS_TRADE"},
		{"HK", "HKD", RailLocal, []string{"account_no", "bank_code"}, []string{"bank_swift"}, false, "GDDS"},
		{"SG", "SGD", RailLocal, []string{"account_no", "bank_code"}, []string{"bank_swift"}, false, "GDDS"},
		{"AE", "AED", RailLocal, []string{"account_no"}, []string{"bank_swift"}, true, "GDI"},
		{"JP", "JPY", RailSWIFT, []string{"bank_swift", "account_no"}, nil, false, "GDDS"},
		{"US", "EUR", RailSWIFT, []string{"bank_swift", "account_no"}, nil, false, "GDDS"},
		{"SE", "SEK", RailSWIFT, []string{"bank_swift", "account_no"}, nil, false, "GDDS"},
		{"AE", "USD", RailSWIFT, []string{"bank_swift", "account_no"}, nil, true, "SAL"},
		{"IN", "USD", RailSWIFT, []string{"bank_swift", "account_no"}, nil, true, "P1006"},
		{"KW", "KWD", RailSWIFT, []string{"bank_swift", "account_no"}, nil, true, "SUPP"},
		{"CN", "USD", RailSWIFT, []string{"bank_swift", "account_no"}, nil, false, "GDDS"},
	}
	for _, tt := range tests {
		t.Run(tt.country+"/"+tt.currency, func(t *testing.T) {
			c, err := DynamicFields(tt.country, tt.currency)
			if err != nil {
				t.Fatal(err)
			}
			if c.Country != tt.country || c.Currency != tt.currency || c.Rail != tt.rail {
				t.Fatalf("got %s/%s rail %s, want rail %s", c.Country, c.Currency, c.Rail, tt.rail)
			}
			var req, opt []string
			for _, f := range c.Fields {
				if f.Required {
					req = append(req, f.Name)
				} else {
					opt = append(opt, f.Name)
				}
			}
			if strings.Join(req, ",") != strings.Join(tt.required, ",") || strings.Join(opt, ",") != strings.Join(tt.optional, ",") {
				t.Fatalf("required %v optional %v, want %v %v", req, opt, tt.required, tt.optional)
			}
			if c.PurposeRequired != tt.purposeRequired || !c.HasPurpose(tt.purposeSample) {
				t.Fatalf("purposeRequired %v, has %s: %v", c.PurposeRequired, tt.purposeSample, c.HasPurpose(tt.purposeSample))
			}
		})
	}
}

func TestCorridorIBANFormats(t *testing.T) {
	// IBAN corridors show the exact format of the destination's IBANs.
	for country, want := range map[string]string{
		"DE/EUR": "^DE[0-9]{2}[0-9]{8}[0-9]{10}$",
		"JE/EUR": "^GB[0-9]{2}[A-Z]{4}[0-9]{6}[0-9]{8}$",
		"AE/AED": "^AE[0-9]{2}[0-9]{3}[0-9]{16}$",
		"SA/USD": "^SA[0-9]{2}[0-9]{2}[A-Z0-9]{18}$",
		"JP/JPY": "^[A-Za-z0-9]{1,34}$",
	} {
		p := strings.Split(country, "/")
		c, err := DynamicFields(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Field("account_no").Format; got != want {
			t.Errorf("%s account_no format %s, want %s", country, got, want)
		}
	}
}

func TestCorridorTableWellFormed(t *testing.T) {
	for _, c := range allCorridors(t) {
		if c.Fields[0].Name != "bank_swift" || c.Fields[1].Name != "account_no" {
			t.Errorf("%s/%s: fixed fields must come first", c.Country, c.Currency)
		}
		names := map[string]bool{}
		for _, f := range c.Fields {
			if names[f.Name] {
				t.Errorf("%s/%s: field %s twice", c.Country, c.Currency, f.Name)
			}
			names[f.Name] = true
			if !isFieldName(f.Name) || f.Type != "string" || f.Description == "" || f.re == nil {
				t.Errorf("%s/%s: field %+v malformed", c.Country, c.Currency, f)
			}
			if !strings.HasPrefix(f.Format, "^") || !strings.HasSuffix(f.Format, "$") {
				t.Errorf("%s/%s: %s format %s is not anchored", c.Country, c.Currency, f.Name, f.Format)
			}
			if _, err := regexp.Compile(f.Format); err != nil {
				t.Errorf("%s/%s: %s format: %v", c.Country, c.Currency, f.Name, err)
			}
			for _, v := range f.AllowedValues {
				if !f.re.MatchString(v) {
					t.Errorf("%s/%s: allowed value %s fails its own format", c.Country, c.Currency, v)
				}
			}
		}
		if len(c.PurposeCodes) == 0 {
			t.Errorf("%s/%s: no purpose codes", c.Country, c.Currency)
		}
		codes := map[string]bool{}
		for _, p := range c.PurposeCodes {
			if codes[p.Code] || p.Code == "" || len(p.Code) > purposeBytesMax || p.Description == "" || strings.ToUpper(p.Code) != p.Code {
				t.Errorf("%s/%s: purpose %+v duplicate or malformed", c.Country, c.Currency, p)
			}
			codes[p.Code] = true
		}
		if c.FeeFixed <= 0 || c.FeeBasisPoints <= 0 || c.FeeBasisPoints > 100 {
			t.Errorf("%s/%s: fee %d + %d bps", c.Country, c.Currency, c.FeeFixed, c.FeeBasisPoints)
		}
	}
	for _, cc := range sepaCountries {
		if c := corridorTable[corridorKey{cc, "EUR"}]; c == nil || c.Rail != RailSEPA {
			t.Errorf("%s/EUR is not SEPA", cc)
		}
	}
}

func TestDynamicFieldsErrors(t *testing.T) {
	tests := []struct{ country, currency, field string }{
		{"ZZ", "EUR", "country"},
		{"UK", "GBP", "country"},
		{"de", "EUR", "country"},
		{"", "EUR", "country"},
		{"DEU", "EUR", "country"},
		{"DE", "XXX", "currency"},
		{"DE", "eur", "currency"},
		{"DE", "", "currency"},
		{"ZZ", "XXX", "country"}, // the country is checked first
	}
	for _, tt := range tests {
		_, err := DynamicFields(tt.country, tt.currency)
		e := postings.AsError(err)
		if err == nil || e.Code != postings.EINVALID || e.Field != tt.field {
			t.Errorf("DynamicFields(%q, %q) = %v, want EINVALID on %s", tt.country, tt.currency, err, tt.field)
		}
	}
}

func TestDynamicFieldsJSON(t *testing.T) {
	c, err := DynamicFields("US", "USD")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "country,currency,fields,purposeCodes,purposeRequired,rail" {
		t.Fatalf("keys %v", keys)
	}
	fields := got["fields"].([]any)
	if len(fields) != 4 {
		t.Fatalf("fields %v", fields)
	}
	at := fields[3].(map[string]any)
	var fk []string
	for k := range at {
		fk = append(fk, k)
	}
	sort.Strings(fk)
	if strings.Join(fk, ",") != "allowedValues,description,format,name,required,type" {
		t.Fatalf("field keys %v", fk)
	}
	if at["name"] != "account_type" || at["format"] != "^(CHECKING|SAVINGS)$" || at["required"] != true {
		t.Fatalf("account_type %v", at)
	}
	if av := at["allowedValues"].([]any); len(av) != 2 || av[0] != "CHECKING" {
		t.Fatalf("allowedValues %v", av)
	}
	if av, ok := fields[0].(map[string]any)["allowedValues"].([]any); !ok || len(av) != 0 {
		t.Fatalf("allowedValues of a free field must be [], got %v", fields[0])
	}
	if strings.Contains(string(raw), "Fee") || strings.Contains(string(raw), `"fee`) {
		t.Fatalf("fee schedule leaked into the answer: %s", raw)
	}
	p := got["purposeCodes"].([]any)[0].(map[string]any)
	if p["code"] == "" || p["description"] == "" {
		t.Fatalf("purpose %v", p)
	}
}

func TestDynamicFieldsReturnsACopy(t *testing.T) {
	c, _ := DynamicFields("IN", "INR")
	c.Fields[2].Format = "x"
	c.Fields[0].Required = true
	c.PurposeCodes[0].Code = "HACK"
	c.PurposeRequired = false
	d, _ := DynamicFields("IN", "INR")
	if d.Fields[2].Format == "x" || d.Fields[0].Required || d.PurposeCodes[0].Code == "HACK" || !d.PurposeRequired {
		t.Fatal("a caller altered the corridor table")
	}
	s, _ := DynamicFields("JP", "JPY")
	s.PurposeCodes[0].Code = "HACK"
	if isoPurposes[0].Code == "HACK" {
		t.Fatal("a caller altered the ISO purpose list")
	}
}

func TestSwiftFeesCoverCurrencies(t *testing.T) {
	for _, code := range postings.CurrencyCodes() {
		if _, ok := swiftFixedFees[code]; !ok {
			t.Errorf("currency %s has no SWIFT fee: remittances in it are refused", code)
		}
	}
	for code, fee := range swiftFixedFees {
		if _, err := postings.LookupCurrency(code); err != nil {
			t.Errorf("SWIFT fee for unknown currency %s", code)
		}
		if fee <= 0 {
			t.Errorf("SWIFT fee %s %d", code, fee)
		}
	}
}

func TestRemittanceFee(t *testing.T) {
	corridor := func(country, currency string) *Corridor {
		c, err := DynamicFields(country, currency)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		country, currency string
		amount, want      int64
	}{
		{"DE", "EUR", 100000, 50 + 50},                               // 1 000.00 EUR: 0.50 + 0.05%
		{"DE", "EUR", 1, 50 + 1},                                     // 0.0005 minor rounds up to 1
		{"DE", "EUR", 20000, 50 + 10},                                // exact: 200.00 × 5 bps = 0.10
		{"DE", "EUR", 20001, 50 + 11},                                // 10.0005 → 11
		{"GB", "GBP", 1234567, 50 + 1235},                            // 1234.567 → 1235
		{"US", "USD", 100, 100 + 1},                                  // 0.1 → 1
		{"IN", "INR", 10000000, 5000 + 30000},                        // 100 000.00 INR at 30 bps
		{"CN", "CNY", 999, 1500 + 4},                                 // 3.996 → 4
		{"AE", "AED", 50000, 500 + 100},                              // exact
		{"JP", "JPY", 1000000, 2300 + 2500},                          // SWIFT JPY, exponent 0
		{"JO", "JOD", 1000, 10700 + 3},                               // SWIFT JOD, exponent 3: 2.5 → 3
		{"DE", "USD", postings.AmountMinorMax, 1500 + 2500000000000}, // no overflow at the maximum
	}
	for _, tt := range tests {
		c := corridor(tt.country, tt.currency)
		got, err := RemittanceFee(c, tt.amount, postings.MustCurrency(tt.currency))
		if err != nil || got != tt.want {
			t.Errorf("fee %s/%s of %d = %d, %v; want %d", tt.country, tt.currency, tt.amount, got, err, tt.want)
		}
	}
	// The fee is never below the exact proportional share (rounding up).
	c := corridor("CN", "CNY")
	for amount := int64(1); amount < 5000; amount += 7 {
		fee, err := RemittanceFee(c, amount, postings.MustCurrency("CNY"))
		if err != nil || (fee-c.FeeFixed)*10000 < amount*c.FeeBasisPoints || (fee-c.FeeFixed-1)*10000 >= amount*c.FeeBasisPoints {
			t.Fatalf("fee of %d is %d (%v): not the ceiling", amount, fee, err)
		}
	}

	eur := corridor("DE", "EUR")
	if _, err := RemittanceFee(eur, 100, postings.MustCurrency("USD")); postings.ErrorCode(err) != postings.EINTERNAL {
		t.Errorf("currency mismatch: %v", err)
	}
	if _, err := RemittanceFee(nil, 100, postings.MustCurrency("EUR")); postings.ErrorCode(err) != postings.EINTERNAL {
		t.Errorf("nil corridor: %v", err)
	}
	for _, a := range []int64{0, -1, postings.AmountMinorMax + 1} {
		if _, err := RemittanceFee(eur, a, postings.MustCurrency("EUR")); postings.AsError(err).Field != "amount" {
			t.Errorf("amount %d: %v", a, err)
		}
	}
	bad := *eur
	bad.FeeBasisPoints = 10001
	if _, err := RemittanceFee(&bad, 100, postings.MustCurrency("EUR")); postings.ErrorCode(err) != postings.EINTERNAL {
		t.Errorf("bad schedule: %v", err)
	}
}

// The fee fact of every corridor is its fee, and re-derives from the rule
// it records (the FEE entry's facts, which audit verify checks).
func TestRemittanceFeeFact(t *testing.T) {
	for _, c := range NamedCorridors() {
		cur := postings.MustCurrency(c.Currency)
		for _, amount := range []int64{1, 999, 1_000_00, 123_456_789} {
			fee, err := RemittanceFee(c, amount, cur)
			if err != nil {
				t.Fatal(err)
			}
			fact, err := RemittanceFeeFact(c, amount, cur)
			if err != nil || fact.Amount != fee || fact.Basis != amount || fact.RuleVersion != "corridor:"+c.Country+":"+c.Currency {
				t.Fatalf("%s/%s %d: fact %+v, %v; fee %d", c.Country, c.Currency, amount, fact, err, fee)
			}
			again, err := postings.NewFeeFact(fact.Rule, fact.RuleVersion, fact.Basis, fact.Bps, fact.Fixed)
			if err != nil || again != fact {
				t.Fatalf("%s/%s %d: re-derived %+v, %v, recorded %+v", c.Country, c.Currency, amount, again, err, fact)
			}
		}
	}
}
