package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/postings"
)

// remitOut is a remittance as a client reads it (create or query answer).
type remitOut struct {
	TxID        string            `json:"txId"`
	Status      string            `json:"status"`
	Amount      json.Number       `json:"amount"`
	Currency    string            `json:"currency"`
	SettledAt   *string           `json:"settledAt"`
	Fee         json.Number       `json:"fee"`
	Rail        string            `json:"rail"`
	Purpose     string            `json:"purpose"`
	PayerID     string            `json:"payerId"`
	Beneficiary map[string]string `json:"beneficiary"`
	Reason      string            `json:"reason"`
	CreatedAt   string            `json:"createdAt"`
	History     []struct {
		Status string `json:"status"`
		At     string `json:"at"`
		Reason string `json:"reason"`
	} `json:"history"`
}

// Beneficiaries with valid details, one per corridor used below.
const (
	benDE = `{"name":"Hans Muster GmbH","country":"DE","bank_swift":"COBADEFFXXX","account_no":"DE89370400440532013000"}`
	benUS = `{"name":"Acme Supplies Inc","country":"US","account_no":"123456789","routing_number":"021000021","account_type":"CHECKING"}`
	benIN = `{"name":"Ravi Textiles Pvt Ltd","country":"IN","account_no":"123456789012","ifsc":"HDFC0001234"}`
)

// remitBody is a creation body; amount is raw JSON ("100.00" or 100), extra
// is appended members (`,"purpose":"SUPP"`).
func remitBody(beneficiary, amount, currency, extra string) string {
	return `{"payer_id":"payer-1","beneficiary":` + beneficiary + `,"amount":` + amount +
		`,"currency":"` + currency + `"` + extra + `}`
}

func (s *testServer) createRemittance(sh shop, body string, headers ...string) remitOut {
	s.t.Helper()
	var r remitOut
	s.request(&sh, "POST", "/shop/remittance/create", body, headers...).must(s.t, 200, 200).into(s.t, &r)
	return r
}

func (s *testServer) queryRemittance(sh shop, txID string) (remitOut, *answer) {
	s.t.Helper()
	var r remitOut
	a := s.request(&sh, "GET", "/shop/remittance/query?txId="+txID, "").must(s.t, 200, 200)
	a.into(s.t, &r)
	return r, a
}

// remitWorker is the lifecycle worker with no waiting between steps and the
// simulated rail: accounts ending in 0000 come back RETURNED AC01.
func (s *testServer) remitWorker() *remittance.Lifecycle {
	return remittance.NewLifecycle(s.l.Remit, remittance.LifecycleConfig{Rail: &railsim.SimulatedRail{
		ReturnPattern: regexp.MustCompile(`0000$`), ReturnReason: "AC01", Now: time.Now,
	}})
}

// step takes one worker step and returns how many remittances moved.
func (s *testServer) step(w *remittance.Lifecycle) int {
	s.t.Helper()
	n, err := w.Step(context.Background())
	if err != nil {
		s.t.Fatalf("worker: %v", err)
	}
	return n
}

// settle runs the worker until nothing moves.
func (s *testServer) settle(w *remittance.Lifecycle) {
	s.t.Helper()
	for i := 0; i < 10; i++ {
		if s.step(w) == 0 {
			return
		}
	}
	s.t.Fatal("the worker never became idle")
}

func (s *testServer) count(query string, args ...any) int {
	s.t.Helper()
	var n int
	if err := s.l.DB().NewRaw(query, args...).Scan(context.Background(), &n); err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestRemittanceDynamicFields(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	type fieldOut struct {
		Name          string   `json:"name"`
		Type          string   `json:"type"`
		Format        string   `json:"format"`
		Description   string   `json:"description"`
		AllowedValues []string `json:"allowedValues"`
		Required      bool     `json:"required"`
	}
	type corridorOut struct {
		Country      string     `json:"country"`
		Currency     string     `json:"currency"`
		Rail         string     `json:"rail"`
		Fields       []fieldOut `json:"fields"`
		PurposeCodes []struct {
			Code        string `json:"code"`
			Description string `json:"description"`
		} `json:"purposeCodes"`
		PurposeRequired bool        `json:"purposeRequired"`
		FeeFixed        json.Number `json:"feeFixed"`
		FeeBasisPoints  int64       `json:"feeBasisPoints"`
	}
	tests := []struct {
		country, currency, rail string
		fields                  string // name, "*" when required
		purposeRequired         bool
		purpose                 string // one of the corridor's codes
		feeFixed                string
		bps                     int64
	}{
		{"DE", "EUR", "SEPA", "bank_swift account_no*", false, "SUPP", "0.50", 5},
		{"FR", "EUR", "SEPA", "bank_swift account_no*", false, "GDDS", "0.50", 5},
		{"GB", "GBP", "LOCAL", "bank_swift account_no* sort_code", false, "SUPP", "0.50", 10},
		{"US", "USD", "LOCAL", "bank_swift account_no* routing_number* account_type*", false, "SCVE", "1.00", 10},
		{"IN", "INR", "LOCAL", "bank_swift account_no* ifsc*", true, "P0802", "50.00", 30},
		{"CN", "CNY", "LOCAL", "bank_swift account_no* cnaps_code*", true, "GOODS_TRADE", "15.00", 40},
		{"HK", "HKD", "LOCAL", "bank_swift account_no* bank_code*", false, "SUPP", "5.00", 20},
		{"SG", "SGD", "LOCAL", "bank_swift account_no* bank_code*", false, "SUPP", "1.00", 20},
		{"AE", "AED", "LOCAL", "bank_swift account_no*", true, "GDI", "5.00", 20},
		{"BR", "USD", "SWIFT", "bank_swift* account_no*", false, "SUPP", "15.00", 25},
		{"JP", "JPY", "SWIFT", "bank_swift* account_no*", false, "SUPP", "2300", 25},
		{"IN", "USD", "SWIFT", "bank_swift* account_no*", true, "P0802", "15.00", 25},
		{"DE", "USD", "SWIFT", "bank_swift* account_no*", false, "SUPP", "15.00", 25},
	}
	for _, tt := range tests {
		t.Run(tt.country+"/"+tt.currency, func(t *testing.T) {
			var c corridorOut
			a := s.request(&sh, "GET", "/shop/remittance/dynamic-fields?country="+tt.country+"&currency="+tt.currency, "").must(t, 200, 200)
			a.into(t, &c)
			if c.Country != tt.country || c.Currency != tt.currency || c.Rail != tt.rail || c.PurposeRequired != tt.purposeRequired {
				t.Errorf("corridor %s", a.Data)
			}
			var names []string
			for _, f := range c.Fields {
				n := f.Name
				if f.Required {
					n += "*"
				}
				names = append(names, n)
				if f.Type != "string" || f.Description == "" || f.AllowedValues == nil ||
					!strings.HasPrefix(f.Format, "^") || !strings.HasSuffix(f.Format, "$") {
					t.Errorf("field %+v", f)
				}
				if _, err := regexp.Compile(f.Format); err != nil {
					t.Errorf("%s: format %v", f.Name, err)
				}
				if f.Name == "account_type" && strings.Join(f.AllowedValues, ",") != "CHECKING,SAVINGS" {
					t.Errorf("account_type values %v", f.AllowedValues)
				}
			}
			if got := strings.Join(names, " "); got != tt.fields {
				t.Errorf("fields %q, want %q", got, tt.fields)
			}
			found := false
			for _, p := range c.PurposeCodes {
				found = found || p.Code == tt.purpose
			}
			if !found {
				t.Errorf("purpose %s missing from %s", tt.purpose, a.Data)
			}
			// Money with the currency's decimals, written by the server.
			if c.FeeFixed.String() != tt.feeFixed || c.FeeBasisPoints != tt.bps {
				t.Errorf("fee %s + %d bps, want %s + %d", c.FeeFixed, c.FeeBasisPoints, tt.feeFixed, tt.bps)
			}
		})
	}

	refusals := []struct{ name, query, msg string }{
		{"400_dynamic_fields_unknown_country", "country=ZZ&currency=EUR", `country: "ZZ" is not an ISO 3166-1 alpha-2 country code (two upper-case letters, e.g. DE)`},
		{"400_dynamic_fields_unknown_currency", "country=DE&currency=XYZ", `currency: "XYZ" is not a supported ISO 4217 currency code`},
		{"400_dynamic_fields_missing_country", "currency=EUR", "country: query parameter is required"},
		{"400_dynamic_fields_missing_currency", "country=DE", "currency: query parameter is required"},
		{"", "country=UK&currency=GBP", `country: "UK" is not an ISO 3166-1 alpha-2 country code (two upper-case letters, e.g. DE); the United Kingdom is GB`},
		{"", "country=DE&currency=eur", "currency: must be a three-letter upper-case ISO 4217 code"},
		{"", "country=&currency=EUR", "country: query parameter is required"},
	}
	for _, tt := range refusals {
		a := s.request(&sh, "GET", "/shop/remittance/dynamic-fields?"+tt.query, "").must(t, 400, 400)
		if a.Message != tt.msg {
			t.Errorf("%s: message %q, want %q", tt.query, a.Message, tt.msg)
		}
		if tt.name != "" {
			golden(t, tt.name, a.raw)
		}
	}
}

// Every refused creation names its field and moves no money.
func TestRemittanceValidation(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{Currencies: []string{"EUR", "USD", "INR"}})
	s.deposit(sh, "EUR", 100000)
	s.deposit(sh, "USD", 100000)
	s.deposit(sh, "INR", 10000000)
	ben := func(b string, replace ...string) string { return strings.NewReplacer(replace...).Replace(b) }
	tests := []struct {
		golden, field, body, msg string
	}{
		{"400_remittance_iban_checksum", "beneficiary.account_no",
			remitBody(ben(benDE, "532013000", "532013001"), `"100.00"`, "EUR", ""), ""},
		{"400_remittance_bic_country", "beneficiary.bank_swift",
			remitBody(ben(benDE, "COBADEFFXXX", "BNPAFRPPXXX"), `"100.00"`, "EUR", ""),
			"beneficiary.bank_swift: BIC BNPAFRPPXXX is of a bank in FR, but beneficiary.country is DE"},
		{"400_remittance_purpose_required", "purpose",
			remitBody(benIN, `"5000.00"`, "INR", ""),
			"purpose: is required for remittances to IN in INR; the codes are listed by GET /shop/remittance/dynamic-fields"},
		{"400_remittance_unknown_country", "beneficiary.country",
			remitBody(ben(benDE, `"DE"`, `"ZZ"`), `"100.00"`, "EUR", ""),
			`beneficiary.country: "ZZ" is not an ISO 3166-1 alpha-2 country code (two upper-case letters, e.g. DE)`},
		{"400_remittance_amount_decimals", "amount",
			remitBody(benDE, `100.001`, "EUR", ""), "amount: EUR allows at most 2 decimals"},
		{"", "purpose", remitBody(benIN, `"5000.00"`, "INR", `,"purpose":"P9999"`),
			`purpose: "P9999" is not a purpose code of remittances to IN in INR`},
		{"", "beneficiary.routing_number", remitBody(ben(benUS, `,"routing_number":"021000021"`, ""), "250", "USD", ""), ""},
		{"", "beneficiary.routing_number", remitBody(ben(benUS, "021000021", "021000022"), "250", "USD", ""), ""},
		{"", "beneficiary.ifsc", remitBody(ben(benUS, `"CHECKING"`, `"CHECKING","ifsc":"HDFC0001234"`), "250", "USD", ""), ""},
		{"", "beneficiary.name", remitBody(ben(benDE, `"Hans Muster GmbH"`, `""`), `"100.00"`, "EUR", ""), ""},
		{"", "amount", remitBody(benDE, `0`, "EUR", ""), "amount: must be greater than zero"},
		{"", "amount", remitBody(benDE, `-5`, "EUR", ""), "amount: must be positive"},
		{"", "currency", remitBody(benDE, `"100.00"`, "XYZ", ""), `currency: "XYZ" is not a supported ISO 4217 currency code`},
		{"", "callback_url", remitBody(benDE, `"100.00"`, "EUR", `,"callback_url":"ftp://example.com/cb"`), "callback_url: must be an absolute URL with scheme http or https"},
		{"", "callback_url", remitBody(benDE, `"100.00"`, "EUR", `,"callback_url":"http://[::1]:9000/cb"`), "callback_url: names ::1, a loopback address, which callbacks may not reach"},
		{"", "payer_id", strings.Replace(remitBody(benDE, `"100.00"`, "EUR", ""), "payer-1", "payer 1", 1), ""},
		{"", "beneficiary.account_no", remitBody(ben(benDE, `"account_no":"DE89370400440532013000"`, `"account_no":12`), `"100.00"`, "EUR", ""), "beneficiary.account_no: must be a string"},
		{"", "beneficiary.name", remitBody(ben(benDE, `"name"`, `"name":"x","name"`), `"100.00"`, "EUR", ""), "beneficiary.name: appears more than once"},
		{"", "beneficiary", remitBody(`"DE89370400440532013000"`, `"100.00"`, "EUR", ""), "beneficiary: must be a JSON object of strings"},
		{"", "beneficiary", `{"payer_id":"p","amount":1,"currency":"EUR"}`, "beneficiary: is required"},
	}
	for _, tt := range tests {
		a := s.request(&sh, "POST", "/shop/remittance/create", tt.body).must(t, 400, 400)
		if !strings.HasPrefix(a.Message, tt.field+": ") {
			t.Errorf("%s: message %q does not name %s", tt.body, a.Message, tt.field)
		}
		if tt.msg != "" && a.Message != tt.msg {
			t.Errorf("message %q, want %q", a.Message, tt.msg)
		}
		if tt.golden != "" {
			golden(t, tt.golden, a.raw)
		}
	}
	for cur, want := range map[string]string{"EUR": "1000.00", "USD": "1000.00", "INR": "100000.00"} {
		if got := s.fundingBalance(sh, cur); got != want {
			t.Errorf("%s funding %s after refusals, want %s", cur, got, want)
		}
	}
	if n := s.count(`select count(*) from remittances`); n != 0 {
		t.Errorf("%d remittances recorded by refused requests", n)
	}
	if n := s.count(`select count(*) from entries where kind <> 'DEPOSIT'`); n != 0 {
		t.Errorf("%d entries written by refused requests", n)
	}
}

func TestDecodeRemittanceCreate(t *testing.T) {
	t.Parallel()
	// Normalize accepts the printed forms: spaces in the IBAN, lower case.
	body := `{"payer_id":" payer-1 ","beneficiary":{"name":" Hans Muster GmbH",` +
		`"country":"de","bank_swift":"cobadeffxxx","account_no":"de89 3704 0044 0532 0130 00","nickname":null},` +
		`"amount":1e3,"currency":"eur","purpose":"supp","callback_url":"https://shop.example.com/cb"}`
	in, err := decodeRemittanceCreate([]byte(body), callbackurl.AllowList{})
	if err != nil {
		t.Fatal(err)
	}
	want := remittance.RemittanceInput{PayerID: "payer-1", Amount: 1_000_00, Fee: 1_00, Currency: "EUR", Purpose: "SUPP",
		Rail: "SEPA", CallbackURL: "https://shop.example.com/cb",
		FeeFact: &postings.FeeFact{Rule: "remittance", RuleVersion: "corridor:DE:EUR", Basis: 1_000_00, Bps: 5, Fixed: 50, Amount: 1_00}}
	ben := `{"account_no":"DE89370400440532013000","bank_swift":"COBADEFFXXX","country":"DE","name":"Hans Muster GmbH"}`
	if string(in.Beneficiary) != ben {
		t.Errorf("beneficiary %s, want %s", in.Beneficiary, ben)
	}
	in.Beneficiary = nil
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got  %+v\nwant %+v", in, want)
	}
	// Fees: fixed + ceil(amount × bps / 10 000).
	for _, tt := range []struct {
		body string
		fee  int64
	}{
		{remitBody(benDE, `"0.01"`, "EUR", ""), 51},
		{remitBody(benUS, `250`, "USD", ""), 1_25},
		{remitBody(benIN, `"10000"`, "INR", `,"purpose":"P0802"`), 50_00 + 30_00},
	} {
		in, err := decodeRemittanceCreate([]byte(tt.body), callbackurl.AllowList{})
		if err != nil || in.Fee != tt.fee {
			t.Errorf("%s: fee %d, %v; want %d", tt.body, in.Fee, err, tt.fee)
		}
	}
	many := `{"payer_id":"p","beneficiary":{`
	for i := 0; i < beneficiaryMembersMax+1; i++ {
		many += fmt.Sprintf(`"f%d":"x",`, i)
	}
	many = strings.TrimSuffix(many, ",") + `},"amount":1,"currency":"EUR"}`
	if _, err := decodeRemittanceCreate([]byte(many), callbackurl.AllowList{}); messageOf(err) != "beneficiary: has more than 20 members" {
		t.Errorf("many members: %v", err)
	}
}

// Creation debits the amount and the fee; the answer and the query agree.
func TestRemittanceCreate(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	r := s.createRemittance(sh, remitBody(
		`{"name":"Hans Muster GmbH","country":"DE","account_no":"DE89 3704 0044 0532 0130 00"}`, `"100.00"`, "EUR",
		`,"purpose":"SUPP","callback_url":"https://shop.example.com/remit"`))
	if !regexp.MustCompile(`^rmt_[a-z0-9]{20}$`).MatchString(r.TxID) || r.Status != "SUBMITTED" || r.Amount != "100.00" ||
		r.Currency != "EUR" || r.Fee != "0.55" || r.Rail != "SEPA" || r.Purpose != "SUPP" || !timestampRE.MatchString(r.CreatedAt) {
		t.Errorf("created %+v", r)
	}
	if got := s.fundingBalance(sh, "EUR"); got != "899.45" {
		t.Errorf("EUR funding %s, want 1000.00 - 100.00 - 0.55 = 899.45", got)
	}
	q, a := s.queryRemittance(sh, r.TxID)
	if q.TxID != r.TxID || q.Status != "SUBMITTED" || q.Amount != "100.00" || q.Fee != "0.55" || q.Rail != "SEPA" ||
		q.PayerID != "payer-1" || q.CreatedAt != r.CreatedAt || q.Reason != "" || len(q.History) != 1 || q.History[0].Status != "SUBMITTED" {
		t.Errorf("query %s", a.Data)
	}
	if fmt.Sprint(q.Beneficiary) != "map[account_no:****3000 country:DE name:Hans Muster GmbH]" {
		t.Errorf("beneficiary %v", q.Beneficiary)
	}
	for _, absent := range []string{"settledAt", "reason", "DE8937040044"} {
		if strings.Contains(string(a.Data), absent) {
			t.Errorf("%s in %s", absent, a.Data)
		}
	}

	// An amount as a JSON number; a local rail with its own fee.
	u := s.createRemittance(sh, remitBody(benUS, `250`, "USD", ""))
	if u.Amount != "250.00" || u.Fee != "1.25" || u.Rail != "LOCAL" || u.Purpose != "" {
		t.Errorf("US %+v", u)
	}
	if got := s.fundingBalance(sh, "USD"); got != "748.75" {
		t.Errorf("USD funding %s", got)
	}
	if n := s.count(`select count(*) from entries where tx_id = ? and kind in ('REMIT_OUT', 'FEE')`, u.TxID); n != 2 {
		t.Errorf("%d entries for the US remittance, want REMIT_OUT and FEE", n)
	}

	// The KYB tier's limit is in the profile and enforced (1007); funds
	// short of amount plus fee are 1001; neither records anything.
	var p struct {
		Limits []struct {
			Currency      string      `json:"currency"`
			RemittanceMax json.Number `json:"remittanceMax"`
		} `json:"limits"`
	}
	s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200).into(t, &p)
	if len(p.Limits) != 2 || p.Limits[0].Currency != "USD" || p.Limits[0].RemittanceMax != "5000.00" {
		t.Errorf("limits %+v", p.Limits)
	}
	rich := s.newShop(merchant.Spec{Currencies: []string{"USD"}})
	s.deposit(rich, "USD", 10_000_00)
	a = s.request(&rich, "POST", "/shop/remittance/create", remitBody(benUS, `"5000.01"`, "USD", "")).must(t, 200, codeLimitExceeded)
	golden(t, "1007_remittance_limit", a.raw)
	s.createRemittance(rich, remitBody(benUS, `"5000.00"`, "USD", ""))

	a = s.request(&sh, "POST", "/shop/remittance/create", remitBody(benUS, `"747.99"`, "USD", "")).must(t, 200, codeInsufficient)
	golden(t, "1001_remittance_insufficient_funds", a.raw)
	s.request(&sh, "POST", "/shop/remittance/create",
		remitBody(`{"name":"Jane Smith","country":"GB","account_no":"31926819","sort_code":"60-16-13"}`, `"10.00"`, "GBP", "")).
		must(t, 200, codeCurrencyDenied)
	if got := s.fundingBalance(sh, "USD"); got != "748.75" {
		t.Errorf("USD funding %s after refusals", got)
	}
	if n := s.count(`select count(*) from remittances`); n != 3 {
		t.Errorf("%d remittances, want 3", n)
	}
}

// SUBMITTED → SCREENING → IN_FLIGHT → SETTLED, one worker step each; the
// history keeps every step and settledAt appears with SETTLED only.
func TestRemittanceSettled(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	r := s.createRemittance(sh, remitBody(benDE, `"200.00"`, "EUR", `,"purpose":"GDDS"`))
	w := s.remitWorker()
	for _, want := range []string{"SCREENING", "IN_FLIGHT", "SETTLED"} {
		if n := s.step(w); n != 1 {
			t.Fatalf("step to %s moved %d", want, n)
		}
		q, a := s.queryRemittance(sh, r.TxID)
		if q.Status != want || (want != "SETTLED") != (q.SettledAt == nil) {
			t.Fatalf("after a step: %s", a.Data)
		}
	}
	if n := s.step(w); n != 0 {
		t.Errorf("a settled remittance moved again (%d)", n)
	}
	q, a := s.queryRemittance(sh, r.TxID)
	if !timestampRE.MatchString(*q.SettledAt) || q.Reason != "" {
		t.Errorf("settled %s", a.Data)
	}
	var steps []string
	for _, h := range q.History {
		if !timestampRE.MatchString(h.At) || h.Reason != "" {
			t.Errorf("step %+v", h)
		}
		steps = append(steps, h.Status)
	}
	if strings.Join(steps, " ") != "SUBMITTED SCREENING IN_FLIGHT SETTLED" || q.History[3].At != *q.SettledAt {
		t.Errorf("history %s", a.Data)
	}
	// The money stays gone: amount to the rail, the fee kept.
	if got := s.fundingBalance(sh, "EUR"); got != "799.40" {
		t.Errorf("funding %s, want 1000.00 - 200.00 - 0.60", got)
	}
	if n := s.count(`select count(*) from entries where tx_id = ? and kind = 'REMIT_SETTLE'`, r.TxID); n != 1 {
		t.Errorf("%d REMIT_SETTLE", n)
	}
}

// RETURNED gives the amount back and keeps the fee; REJECTED (a sanctions
// hit) gives back both (docs/remittances.md).
func TestRemittanceReturnedAndRejected(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	returnedShop := s.fundedShop()
	rejectedShop := s.fundedShop()
	if _, err := s.l.Remit.ReplaceSanctions(context.Background(), []remittance.SanctionsEntry{{Name: "Evil Corp Ltd", Country: "DE", List: "TEST", Ref: "42"}}); err != nil {
		t.Fatal(err)
	}
	ret := s.createRemittance(returnedShop, remitBody(strings.Replace(benUS, "123456789", "9876540000", 1), `"100.00"`, "USD", ""))
	rej := s.createRemittance(rejectedShop, remitBody(strings.Replace(benDE, "Hans Muster GmbH", "EVIL CORP", 1), `"100.00"`, "EUR", ""))
	if got := s.fundingBalance(returnedShop, "USD"); got != "898.90" {
		t.Errorf("USD funding after create %s", got)
	}
	s.settle(s.remitWorker())

	q, a := s.queryRemittance(returnedShop, ret.TxID)
	if q.Status != "RETURNED" || q.Reason != "AC01" || q.SettledAt != nil || len(q.History) != 4 ||
		q.History[3].Status != "RETURNED" || q.History[3].Reason != "AC01" || q.Beneficiary["account_no"] != "****0000" {
		t.Errorf("returned %s", a.Data)
	}
	if got := s.fundingBalance(returnedShop, "USD"); got != "998.90" {
		t.Errorf("USD funding %s: the amount comes back, the 1.10 fee is kept", got)
	}

	q, a = s.queryRemittance(rejectedShop, rej.TxID)
	if q.Status != "REJECTED" || q.Reason != "sanctions screening: TEST:42 Evil Corp Ltd (DE)" || q.SettledAt != nil ||
		len(q.History) != 3 || q.History[2].Status != "REJECTED" || q.History[2].Reason != q.Reason {
		t.Errorf("rejected %s", a.Data)
	}
	if got := s.fundingBalance(rejectedShop, "EUR"); got != "1000.00" {
		t.Errorf("EUR funding %s: amount and fee come back", got)
	}
	for _, tt := range []struct {
		txID, kind string
		n          int
	}{
		{ret.TxID, "REMIT_RETURN", 1}, {ret.TxID, "FEE_REFUND", 0}, {ret.TxID, "REMIT_SETTLE", 0},
		{rej.TxID, "REMIT_RETURN", 1}, {rej.TxID, "FEE_REFUND", 1}, {rej.TxID, "REMIT_SETTLE", 0},
	} {
		if n := s.count(`select count(*) from entries where tx_id = ? and kind = ?`, tt.txID, tt.kind); n != tt.n {
			t.Errorf("%s: %d %s, want %d", tt.txID, n, tt.kind, tt.n)
		}
	}
}

// Several workers racing over the same remittances: every remittance takes
// each step exactly once, and moves its money once.
func TestRemittanceWorkersRace(t *testing.T) {
	// Not parallel: it races several remittance workers; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{Currencies: []string{"USD"}})
	s.deposit(sh, "USD", 100_000_00)
	var ids []string
	for i := 0; i < 12; i++ {
		account := fmt.Sprintf("55500%04d", i+1)
		if i%3 == 0 {
			account = fmt.Sprintf("5550%d0000", i)
		}
		r := s.createRemittance(sh, remitBody(strings.Replace(benUS, "123456789", account, 1), `"10.00"`, "USD", ""))
		ids = append(ids, r.TxID)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := s.remitWorker()
			for j := 0; j < 6; j++ {
				if _, err := w.Step(ctx); err != nil {
					errs <- err
				}
				// Claims last 30 s: drop them so that every worker competes
				// for every step, also for rows another worker is moving.
				// This helper UPDATE locks every row in the table's order,
				// while a worker's transaction holds some of them, so
				// PostgreSQL may break a deadlock by cancelling it (the
				// workers' own transactions retry theirs): try it again.
				for attempt := 1; ; attempt++ {
					_, err := s.l.DB().NewRaw(`update remittances set claimed_until = null`).Exec(ctx)
					if err == nil {
						break
					}
					if attempt == 5 || !strings.Contains(err.Error(), "40P01") {
						errs <- err
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.settle(s.remitWorker())
	for i, id := range ids {
		want, kind := "SETTLED", "REMIT_SETTLE"
		if i%3 == 0 {
			want, kind = "RETURNED", "REMIT_RETURN"
		}
		q, a := s.queryRemittance(sh, id)
		if q.Status != want || len(q.History) != 4 {
			t.Errorf("%s: %s", id, a.Data)
		}
		if n := s.count(`select count(*) from remittance_history where tx_id = ?`, id); n != 4 {
			t.Errorf("%s: %d history rows", id, n)
		}
		if n := s.count(`select count(distinct status) from remittance_history where tx_id = ?`, id); n != 4 {
			t.Errorf("%s: %d distinct statuses in the history", id, n)
		}
		if n := s.count(`select count(*) from entries where tx_id = ? and kind like 'REMIT_%'`, id); n != 2 {
			t.Errorf("%s: %d REMIT_* entries, want REMIT_OUT and one %s", id, n, kind)
		}
		if n := s.count(`select count(*) from entries where tx_id = ? and kind = ?`, id, kind); n != 1 {
			t.Errorf("%s: %d %s", id, n, kind)
		}
	}
	// 4 returned: 40.00 back; every fee (1.01 each) kept.
	if got := s.fundingBalance(sh, "USD"); got != "99907.88" {
		t.Errorf("funding %s", got)
	}
}

// Another merchant's txId is answered exactly like an unknown one.
func TestRemittanceOtherMerchant(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	owner := s.fundedShop()
	thief := s.fundedShop()
	r := s.createRemittance(owner, remitBody(benDE, `"10.00"`, "EUR", ""))
	foreign := s.request(&thief, "GET", "/shop/remittance/query?txId="+r.TxID, "").must(t, 200, codeRemitNotFound)
	missing := s.request(&thief, "GET", "/shop/remittance/query?txId=rmt_"+strings.Repeat("0", 20), "").must(t, 200, codeRemitNotFound)
	if string(foreign.raw) != string(missing.raw) {
		t.Errorf("foreign %s, unknown %s", foreign.raw, missing.raw)
	}
	golden(t, "1101_remittance_not_found", foreign.raw)
	a := s.request(&thief, "GET", "/shop/remittance/query", "").must(t, 400, 400)
	golden(t, "400_remittance_query_missing", a.raw)
	if a := s.request(&thief, "GET", "/shop/remittance/query?txId=a%20b", "").must(t, 400, 400); !strings.HasPrefix(a.Message, "txId: ") {
		t.Errorf("message %q", a.Message)
	}
	if q, _ := s.queryRemittance(owner, r.TxID); q.Status != "SUBMITTED" {
		t.Errorf("owner's remittance %+v", q)
	}
}

func TestRemittanceIdempotent(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	body := remitBody(benDE, `"100.00"`, "EUR", `,"purpose":"SUPP"`)
	first := s.request(&sh, "POST", "/shop/remittance/create", body, "Idempotency-Key", "create-1").must(t, 200, 200)
	again := s.request(&sh, "POST", "/shop/remittance/create", body, "Idempotency-Key", "create-1").must(t, 200, 200)
	if string(first.raw) != string(again.raw) {
		t.Fatalf("retry answered\n%s\nfirst\n%s", again.raw, first.raw)
	}
	if got := s.fundingBalance(sh, "EUR"); got != "899.45" {
		t.Errorf("funding %s: the retry debited twice", got)
	}
	a := s.request(&sh, "POST", "/shop/remittance/create", remitBody(benDE, `"100.01"`, "EUR", `,"purpose":"SUPP"`),
		"Idempotency-Key", "create-1").must(t, 200, codeIdemConflict)
	golden(t, "1008_idempotency_conflict", a.raw)
	// A business failure is replayed too, and records nothing.
	big := remitBody(benDE, `"2000.00"`, "EUR", "")
	f1 := s.request(&sh, "POST", "/shop/remittance/create", big, "Idempotency-Key", "create-2").must(t, 200, codeInsufficient)
	f2 := s.request(&sh, "POST", "/shop/remittance/create", big, "Idempotency-Key", "create-2").must(t, 200, codeInsufficient)
	if string(f1.raw) != string(f2.raw) {
		t.Errorf("failure replay\n%s\n%s", f2.raw, f1.raw)
	}
	if n := s.count(`select count(*) from remittances`); n != 1 {
		t.Errorf("%d remittances, want 1", n)
	}
	// Without a key, the same body is a second remittance.
	var r1, r2 remitOut
	first.into(t, &r1)
	r2 = s.createRemittance(sh, body)
	if r1.TxID == r2.TxID {
		t.Error("a request without a key replayed")
	}
}
