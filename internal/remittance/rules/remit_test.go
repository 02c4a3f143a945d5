package rules

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

// validRemittances holds one passing request per corridor kind.
func validRemittances() map[string]RemittanceRequest {
	req := func(country, currency, bic, account, purpose string, extra map[string]string) RemittanceRequest {
		return RemittanceRequest{
			PayerID:     "payer_42",
			Beneficiary: Beneficiary{Name: "Müller Maschinenbau GmbH", Country: country, BankSwift: bic, AccountNo: account, Extra: extra},
			Amount:      125000,
			Currency:    currency,
			Purpose:     purpose,
		}
	}
	return map[string]RemittanceRequest{
		"DE EUR with BIC":        req("DE", "EUR", "COBADEFFXXX", "DE89370400440532013000", "GDDS", nil),
		"DE EUR IBAN only":       req("DE", "EUR", "", "DE89370400440532013000", "", nil),
		"FR EUR":                 req("FR", "EUR", "BNPAFRPP", "FR1420041010050500013M02606", "SUPP", nil),
		"GB EUR (SEPA)":          req("GB", "EUR", "NWBKGB2L", "GB29NWBK60161331926819", "", nil),
		"JE EUR with GB IBAN":    req("JE", "EUR", "NWBKGB2L", "GB29NWBK60161331926819", "", nil),
		"CH EUR":                 req("CH", "EUR", "", "CH9300762011623852957", "", nil),
		"GB GBP sort code":       req("GB", "GBP", "", "31926819", "", map[string]string{"sort_code": "601613"}),
		"GB GBP IBAN":            req("GB", "GBP", "", "GB29NWBK60161331926819", "", nil),
		"GB GBP IBAN + sort":     req("GB", "GBP", "NWBKGB2L", "GB29NWBK60161331926819", "SUPP", map[string]string{"sort_code": "601613"}),
		"US USD 026009593":       req("US", "USD", "", "123456789", "", map[string]string{"routing_number": "026009593", "account_type": "CHECKING"}),
		"US USD 021000021":       req("US", "USD", "CHASUS33", "0001234", "SCVE", map[string]string{"routing_number": "021000021", "account_type": "SAVINGS"}),
		"IN INR":                 req("IN", "INR", "", "50100012345678", "P0802", map[string]string{"ifsc": "HDFC0001234"}),
		"CN CNY":                 req("CN", "CNY", "", "6222021234567890123", "GOODS_TRADE", map[string]string{"cnaps_code": "102100099996"}),
		"HK HKD":                 req("HK", "HKD", "HSBCHKHHHKH", "123456789001", "", map[string]string{"bank_code": "004"}),
		"SG SGD":                 req("SG", "SGD", "", "0721234567", "SCVE", map[string]string{"bank_code": "7171"}),
		"AE AED":                 req("AE", "AED", "EBILAEAD", "AE070331234567890123456", "GDI", nil),
		"SWIFT JP JPY":           req("JP", "JPY", "MHCBJPJT", "1234567", "", nil),
		"SWIFT DE USD IBAN":      req("DE", "USD", "DEUTDEFF", "DE89370400440532013000", "", nil),
		"SWIFT AE USD purpose":   req("AE", "USD", "EBILAEAD", "AE070331234567890123456", "SAL", nil),
		"SWIFT IN USD purpose":   req("IN", "USD", "HDFCINBB", "50100012345678", "P1006", nil),
		"SWIFT SA SAR IBAN":      req("SA", "SAR", "NCBKSAJE", "SA0380000000608010167519", "OTHR", nil),
		"SWIFT US EUR":           req("US", "EUR", "CHASUS33", "000123456789", "", nil),
		"SWIFT JE GBP (GB IBAN)": req("JE", "GBP", "", "", "", nil), // completed below
	}
}

func TestValidateRemittanceValid(t *testing.T) {
	rails := map[string]Rail{
		"DE EUR with BIC": RailSEPA, "GB EUR (SEPA)": RailSEPA, "JE EUR with GB IBAN": RailSEPA,
		"GB GBP sort code": RailLocal, "US USD 026009593": RailLocal, "IN INR": RailLocal, "CN CNY": RailLocal,
		"HK HKD": RailLocal, "SG SGD": RailLocal, "AE AED": RailLocal,
		"SWIFT JP JPY": RailSWIFT, "SWIFT DE USD IBAN": RailSWIFT, "SWIFT AE USD purpose": RailSWIFT,
	}
	for name, r := range validRemittances() {
		if name == "SWIFT JE GBP (GB IBAN)" {
			r.Beneficiary.BankSwift = "RBOSJESH" // a Jersey BIC
			r.Beneficiary.AccountNo = "GB29NWBK60161331926819"
		}
		t.Run(name, func(t *testing.T) {
			c, err := ValidateRemittance(&r)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if want, ok := rails[name]; ok && c.Rail != want {
				t.Fatalf("rail %s, want %s", c.Rail, want)
			}
			if c.Country != r.Beneficiary.Country || c.Currency != r.Currency {
				t.Fatalf("corridor %s/%s", c.Country, c.Currency)
			}
			if _, err := RemittanceFee(c, r.Amount, postings.MustCurrency(r.Currency)); err != nil {
				t.Fatalf("fee: %v", err)
			}
		})
	}
}

func TestValidateRemittanceFailures(t *testing.T) {
	base := validRemittances()
	tests := []struct {
		name   string
		from   string
		mutate func(r *RemittanceRequest)
		field  string
	}{
		{"payer missing", "DE EUR with BIC", func(r *RemittanceRequest) { r.PayerID = "" }, "payer_id"},
		{"payer with space", "DE EUR with BIC", func(r *RemittanceRequest) { r.PayerID = "payer 42" }, "payer_id"},
		{"payer too long", "DE EUR with BIC", func(r *RemittanceRequest) { r.PayerID = strings.Repeat("p", 65) }, "payer_id"},
		{"name missing", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = "" }, "beneficiary.name"},
		{"name control char", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = "Acme\nLtd" }, "beneficiary.name"},
		{"name bidi override", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = "Acme \u202eLtd" }, "beneficiary.name"},
		{"name zero width", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = "Ac\u200bme" }, "beneficiary.name"},
		{"name too long", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = strings.Repeat("é", 141) }, "beneficiary.name"},
		{"name no letter", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = "12345 ---" }, "beneficiary.name"},
		{"name padded", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = " Acme" }, "beneficiary.name"},
		{"name invalid utf8", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Name = "Acme \xff" }, "beneficiary.name"},
		{"unknown country", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Country = "ZZ" }, "beneficiary.country"},
		{"UK is not a code", "GB GBP sort code", func(r *RemittanceRequest) { r.Beneficiary.Country = "UK" }, "beneficiary.country"},
		{"lower-case country", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Country = "de" }, "beneficiary.country"},
		{"unknown currency", "DE EUR with BIC", func(r *RemittanceRequest) { r.Currency = "XXX" }, "currency"},
		{"bad IBAN checksum", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "DE89370400440532013001" }, "beneficiary.account_no"},
		{"IBAN too short", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "DE8937040044053201300" }, "beneficiary.account_no"},
		{"IBAN of another country", "DE EUR IBAN only", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "FR1420041010050500013M02606" }, "beneficiary.account_no"},
		{"IBAN missing", "DE EUR IBAN only", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "" }, "beneficiary.account_no"},
		{"domestic number on SEPA", "DE EUR IBAN only", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "0532013000" }, "beneficiary.account_no"},
		{"bad IBAN checksum on SWIFT", "SWIFT SA SAR IBAN", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "SA0380000000608010167518" }, "beneficiary.account_no"},
		{"SWIFT IBAN country needs IBAN", "SWIFT DE USD IBAN", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "0532013000" }, "beneficiary.account_no"},
		{"SWIFT account punctuation", "SWIFT JP JPY", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "123-4567" }, "beneficiary.account_no"},
		{"SWIFT account too long", "SWIFT JP JPY", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = strings.Repeat("1", 35) }, "beneficiary.account_no"},
		{"BIC country disagrees", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.BankSwift = "NWBKGB2L" }, "beneficiary.bank_swift"},
		{"BIC country disagrees on SWIFT", "SWIFT JP JPY", func(r *RemittanceRequest) { r.Beneficiary.BankSwift = "CHASUS33" }, "beneficiary.bank_swift"},
		{"BIC malformed", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.BankSwift = "COBADEF" }, "beneficiary.bank_swift"},
		{"BIC lower case", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.BankSwift = "cobadeff" }, "beneficiary.bank_swift"},
		{"BIC missing on SWIFT", "SWIFT JP JPY", func(r *RemittanceRequest) { r.Beneficiary.BankSwift = "" }, "beneficiary.bank_swift"},
		{"GB domestic without sort code", "GB GBP sort code", func(r *RemittanceRequest) { r.Beneficiary.Extra = nil }, "beneficiary.sort_code"},
		{"GB sort code 5 digits", "GB GBP sort code", func(r *RemittanceRequest) { r.Beneficiary.Extra = map[string]string{"sort_code": "60161"} }, "beneficiary.sort_code"},
		{"GB sort code disagrees with IBAN", "GB GBP IBAN + sort", func(r *RemittanceRequest) { r.Beneficiary.Extra = map[string]string{"sort_code": "601614"} }, "beneficiary.sort_code"},
		{"GB account 7 digits", "GB GBP sort code", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "3192681" }, "beneficiary.account_no"},
		{"GB GBP with a DE IBAN", "GB GBP IBAN", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "DE89370400440532013000" }, "beneficiary.account_no"},
		{"GB GBP IBAN bad checksum", "GB GBP IBAN", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "GB28NWBK60161331926819" }, "beneficiary.account_no"},
		{"ABA checksum 021000022", "US USD 026009593", func(r *RemittanceRequest) { r.Beneficiary.Extra["routing_number"] = "021000022" }, "beneficiary.routing_number"},
		{"ABA missing", "US USD 026009593", func(r *RemittanceRequest) { delete(r.Beneficiary.Extra, "routing_number") }, "beneficiary.routing_number"},
		{"US account too short", "US USD 026009593", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "123" }, "beneficiary.account_no"},
		{"US account type unknown", "US USD 026009593", func(r *RemittanceRequest) { r.Beneficiary.Extra["account_type"] = "BROKERAGE" }, "beneficiary.account_type"},
		{"US account type missing", "US USD 026009593", func(r *RemittanceRequest) { delete(r.Beneficiary.Extra, "account_type") }, "beneficiary.account_type"},
		{"field of another corridor", "US USD 026009593", func(r *RemittanceRequest) { r.Beneficiary.Extra["ifsc"] = "HDFC0001234" }, "beneficiary.ifsc"},
		{"unknown field name", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Extra = map[string]string{"Weird Key!": "x"} }, "beneficiary"},
		{"fixed field in Extra", "DE EUR with BIC", func(r *RemittanceRequest) { r.Beneficiary.Extra = map[string]string{"account_no": "x"} }, "beneficiary.account_no"},
		{"too many extras", "DE EUR with BIC", func(r *RemittanceRequest) {
			r.Beneficiary.Extra = map[string]string{}
			for i := 0; i <= beneficiaryExtraMax; i++ {
				r.Beneficiary.Extra["f"+strings.Repeat("x", i)] = "1"
			}
		}, "beneficiary"},
		{"extra value too long", "IN INR", func(r *RemittanceRequest) { r.Beneficiary.Extra["ifsc"] = strings.Repeat("A", 141) }, "beneficiary.ifsc"},
		{"IFSC fifth char not 0", "IN INR", func(r *RemittanceRequest) { r.Beneficiary.Extra["ifsc"] = "HDFC1001234" }, "beneficiary.ifsc"},
		{"IFSC missing", "IN INR", func(r *RemittanceRequest) { r.Beneficiary.Extra = nil }, "beneficiary.ifsc"},
		{"IN purpose missing", "IN INR", func(r *RemittanceRequest) { r.Purpose = "" }, "purpose"},
		{"IN purpose not RBI", "IN INR", func(r *RemittanceRequest) { r.Purpose = "GDDS" }, "purpose"},
		{"IN via SWIFT purpose missing", "SWIFT IN USD purpose", func(r *RemittanceRequest) { r.Purpose = "" }, "purpose"},
		{"CN purpose missing", "CN CNY", func(r *RemittanceRequest) { r.Purpose = "" }, "purpose"},
		{"CN CNAPS 11 digits", "CN CNY", func(r *RemittanceRequest) { r.Beneficiary.Extra["cnaps_code"] = "10210009999" }, "beneficiary.cnaps_code"},
		{"AE purpose missing", "AE AED", func(r *RemittanceRequest) { r.Purpose = "" }, "purpose"},
		{"AE purpose unknown", "AE AED", func(r *RemittanceRequest) { r.Purpose = "GDS" }, "purpose"},
		{"AE IBAN length", "AE AED", func(r *RemittanceRequest) { r.Beneficiary.AccountNo = "AE07033123456789012345" }, "beneficiary.account_no"},
		{"HK bank code 4 digits", "HK HKD", func(r *RemittanceRequest) { r.Beneficiary.Extra["bank_code"] = "0040" }, "beneficiary.bank_code"},
		{"SG bank code 3 digits", "SG SGD", func(r *RemittanceRequest) { r.Beneficiary.Extra["bank_code"] = "717" }, "beneficiary.bank_code"},
		{"purpose not of corridor", "DE EUR with BIC", func(r *RemittanceRequest) { r.Purpose = "P0802" }, "purpose"},
		{"purpose huge", "DE EUR with BIC", func(r *RemittanceRequest) { r.Purpose = strings.Repeat("X", 1000) }, "purpose"},
		{"amount zero", "DE EUR with BIC", func(r *RemittanceRequest) { r.Amount = 0 }, "amount"},
		{"amount negative", "DE EUR with BIC", func(r *RemittanceRequest) { r.Amount = -100 }, "amount"},
		{"amount too large", "DE EUR with BIC", func(r *RemittanceRequest) { r.Amount = postings.AmountMinorMax + 1 }, "amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := base[tt.from]
			if !ok {
				t.Fatalf("no base %q", tt.from)
			}
			if r.Beneficiary.Extra != nil {
				extra := map[string]string{}
				for k, v := range r.Beneficiary.Extra {
					extra[k] = v
				}
				r.Beneficiary.Extra = extra
			}
			tt.mutate(&r)
			c, err := ValidateRemittance(&r)
			if err == nil {
				t.Fatalf("accepted, corridor %s/%s", c.Country, c.Currency)
			}
			var e *postings.Error
			if !errors.As(err, &e) || e.Code != postings.EINVALID || e.Field != tt.field {
				t.Fatalf("error %v (field %q), want EINVALID on %q", err, postings.AsError(err).Field, tt.field)
			}
			if len(e.Message) > 600 {
				t.Fatalf("message of %d bytes", len(e.Message))
			}
		})
	}
	if _, err := ValidateRemittance(nil); postings.ErrorCode(err) != postings.EINVALID {
		t.Errorf("nil request: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	r := RemittanceRequest{
		PayerID: " payer_42 ",
		Beneficiary: Beneficiary{Name: "  Acme Ltd ", Country: " de", BankSwift: "coba de ff",
			AccountNo: "de89 3704 0044 0532 0130 00"},
		Amount: 100, Currency: "eur", Purpose: " gdds",
	}
	r.Normalize()
	if r.Beneficiary.AccountNo != "DE89370400440532013000" || r.Beneficiary.BankSwift != "COBADEFF" ||
		r.Beneficiary.Country != "DE" || r.Currency != "EUR" || r.Purpose != "GDDS" || r.PayerID != "payer_42" || r.Beneficiary.Name != "Acme Ltd" {
		t.Fatalf("normalised to %+v", r)
	}
	if _, err := ValidateRemittance(&r); err != nil {
		t.Fatalf("refused after Normalize: %v", err)
	}

	extra := map[string]string{"sort_code": "60-16-13"}
	g := RemittanceRequest{PayerID: "p", Beneficiary: Beneficiary{Name: "Acme", Country: "gb", AccountNo: "3192 6819", Extra: extra},
		Amount: 100, Currency: "gbp"}
	g.Normalize()
	if g.Beneficiary.Extra["sort_code"] != "601613" || g.Beneficiary.AccountNo != "31926819" || extra["sort_code"] != "60-16-13" {
		t.Fatalf("GB normalised to %+v (caller's map %v)", g.Beneficiary, extra)
	}
	if _, err := ValidateRemittance(&g); err != nil {
		t.Fatalf("refused after Normalize: %v", err)
	}

	u := RemittanceRequest{PayerID: "p", Beneficiary: Beneficiary{Name: "Acme", Country: "US", AccountNo: "12345",
		Extra: map[string]string{"routing_number": "026009593", "account_type": "checking"}}, Amount: 1, Currency: "USD"}
	u.Normalize()
	if _, err := ValidateRemittance(&u); err != nil {
		t.Fatalf("refused after Normalize: %v", err)
	}
	// Normalize removes formatting only: a wrong IBAN stays wrong.
	w := RemittanceRequest{PayerID: "p", Beneficiary: Beneficiary{Name: "Acme", Country: "DE", AccountNo: "de89 3704 0044 0532 0130 01"}, Amount: 1, Currency: "EUR"}
	w.Normalize()
	if _, err := ValidateRemittance(&w); postings.AsError(err).Field != "beneficiary.account_no" {
		t.Fatalf("wrong IBAN after Normalize: %v", err)
	}
	// Unknown country or currency: Normalize still trims and does not panic.
	z := RemittanceRequest{Beneficiary: Beneficiary{Country: "zz", AccountNo: " 1 2 ", Extra: map[string]string{"x": " y "}}}
	z.Normalize()
	if z.Beneficiary.AccountNo != "1 2" || z.Beneficiary.Extra["x"] != "y" {
		t.Fatalf("unknown corridor normalised to %+v", z.Beneficiary)
	}
}

func TestBeneficiaryJSON(t *testing.T) {
	var b Beneficiary
	in := `{"name":"Acme","country":"US","bank_swift":null,"account_no":"12345","routing_number":"026009593","account_type":"CHECKING"}`
	if err := json.Unmarshal([]byte(in), &b); err != nil {
		t.Fatal(err)
	}
	if b.Name != "Acme" || b.Country != "US" || b.BankSwift != "" || b.AccountNo != "12345" ||
		len(b.Extra) != 2 || b.Extra["routing_number"] != "026009593" {
		t.Fatalf("decoded %+v", b)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"account_no":"12345","account_type":"CHECKING","country":"US","name":"Acme","routing_number":"026009593"}` {
		t.Fatalf("encoded %s", out)
	}

	// Inside a request struct, as the API decodes it.
	var req struct {
		Beneficiary Beneficiary `json:"beneficiary"`
	}
	for body, field := range map[string]string{
		`{"beneficiary":{"name":"Acme","ifsc":12}}`:      "beneficiary.ifsc",
		`{"beneficiary":{"name":["Acme"]}}`:              "beneficiary.name",
		`{"beneficiary":{"Bad Key":1}}`:                  "beneficiary",
		`{"beneficiary":"Acme"}`:                         "beneficiary",
		`{"beneficiary":{"name":"Acme","country":true}}`: "beneficiary.country",
	} {
		err := json.Unmarshal([]byte(body), &req)
		if e := postings.AsError(err); err == nil || e.Code != postings.EINVALID || e.Field != field {
			t.Errorf("%s: %v, want EINVALID on %s", body, err, field)
		}
	}
	many := map[string]string{"name": "x"}
	for i := 0; i < 30; i++ {
		many["f"+strings.Repeat("x", i)] = "1"
	}
	raw, _ := json.Marshal(many)
	if err := json.Unmarshal(raw, &b); postings.AsError(err).Field != "beneficiary" {
		t.Errorf("too many members: %v", err)
	}
	if err := json.Unmarshal([]byte(`null`), &b); err != nil {
		t.Errorf("null: %v", err)
	}
}

// FuzzValidateBeneficiary: ValidateRemittance (after Normalize) never panics,
// every refusal is an EINVALID *Error naming a field of the request, and
// every accepted IBAN account satisfies mod 97.
func FuzzValidateBeneficiary(f *testing.F) {
	for _, r := range validRemittances() {
		k, v := "", ""
		for k, v = range r.Beneficiary.Extra {
			break
		}
		f.Add(r.Beneficiary.Name, r.Beneficiary.Country, r.Beneficiary.BankSwift, r.Beneficiary.AccountNo, k, v, r.Currency, r.Purpose, r.Amount, false)
	}
	f.Add("Acme", "GB", "", "31926819", "sort_code", "60-16-13", "GBP", "", int64(1), true)
	f.Add("\x00", "ZZ", "\xff", "", "Bad Key", "", "", "", int64(-1), true)
	allowed := map[string]bool{"payer_id": true, "amount": true, "currency": true, "purpose": true, "beneficiary": true}
	f.Fuzz(func(t *testing.T, name, country, bic, account, key, val, currency, purpose string, amount int64, normalize bool) {
		r := RemittanceRequest{PayerID: "payer", Beneficiary: Beneficiary{Name: name, Country: country, BankSwift: bic, AccountNo: account},
			Amount: amount, Currency: currency, Purpose: purpose}
		if key != "" {
			r.Beneficiary.Extra = map[string]string{key: val}
			if country == "US" { // let the US corridor get far
				r.Beneficiary.Extra["routing_number"] = "026009593"
				r.Beneficiary.Extra["account_type"] = "CHECKING"
			}
		}
		if normalize {
			r.Normalize()
		}
		c, err := ValidateRemittance(&r)
		if err != nil {
			var e *postings.Error
			if !errors.As(err, &e) || e.Code != postings.EINVALID || e.Field == "" {
				t.Fatalf("refusal %v is not EINVALID with a field", err)
			}
			if !allowed[e.Field] && !strings.HasPrefix(e.Field, "beneficiary.") {
				t.Fatalf("refusal names field %q", e.Field)
			}
			return
		}
		acc := r.Beneficiary.AccountNo
		f := c.Field("account_no")
		if f.kind == kindIBAN || (f.kind == kindIBANOrLocal && !isDigit(acc[0])) {
			if m := bigMod97(acc); m != 1 {
				t.Fatalf("accepted IBAN %q with mod 97 = %d", acc, m)
			}
			if want, _ := ibanPrefixFor(c.Country); acc[:2] != want {
				t.Fatalf("accepted IBAN %q for %s", acc, c.Country)
			}
		}
		if c.PurposeRequired && r.Purpose == "" {
			t.Fatal("accepted without a required purpose")
		}
		if r.Beneficiary.BankSwift != "" && !sameIBANFamily(r.Beneficiary.BankSwift[4:6], c.Country) {
			t.Fatalf("accepted BIC %s for %s", r.Beneficiary.BankSwift, c.Country)
		}
		if _, err := RemittanceFee(c, r.Amount, postings.MustCurrency(r.Currency)); err != nil {
			t.Fatalf("fee of an accepted remittance: %v", err)
		}
	})
}
