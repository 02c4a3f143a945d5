package api

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// The remittance endpoints (spec 2.5, 2.6, 3.2; docs/api.md, "Remittances";
// the rules are docs/remittances.md). The corridor data and the checks are
// postings' (corridors.go, remit.go); the lifecycle is the ledger's worker.

// beneficiaryMembersMax bounds the members of "beneficiary": the four fixed
// fields and the at most 16 dynamic fields ValidateRemittance accepts.
const beneficiaryMembersMax = 4 + 16

// queryParam reads a required query parameter.
func queryParam(c *gin.Context, name string) (string, error) {
	v, ok := c.GetQuery(name)
	if !ok || v == "" {
		return "", postings.FieldErrorf(name, "query parameter is required")
	}
	return v, nil
}

// handleRemittanceDynamicFields answers GET
// /shop/remittance/dynamic-fields?country=XX&currency=YYY: the corridor of a
// destination country and currency. An unknown country or currency is a
// 400 naming the parameter.
func handleRemittanceDynamicFields() gin.HandlerFunc {
	return func(c *gin.Context) {
		country, err := queryParam(c, "country")
		if err != nil {
			writeError(c, err)
			return
		}
		code, err := queryParam(c, "currency")
		if err != nil {
			writeError(c, err)
			return
		}
		cur, err := parseCurrency("currency", code)
		if err != nil {
			writeError(c, err)
			return
		}
		// DynamicFields names "country" and "currency", the parameters.
		cor, err := rules.DynamicFields(country, cur.Code)
		writeResult(c, views.NewDynamicFields, cor, err)
	}
}

// beneficiaryOf splits the decoded beneficiary object into the fixed fields
// of the spec and the corridor's dynamic fields.
func beneficiaryOf(m stringMembers) rules.Beneficiary {
	var b rules.Beneficiary
	for k, v := range m {
		switch k {
		case "name":
			b.Name = v
		case "country":
			b.Country = v
		case "bank_swift":
			b.BankSwift = v
		case "account_no":
			b.AccountNo = v
		default:
			if b.Extra == nil {
				b.Extra = map[string]string{}
			}
			b.Extra[k] = v
		}
	}
	return b
}

// decodeRemittanceCreate decodes and validates POST /shop/remittance/create
// (spec 2.6) into the ledger's input: the request normalised (spaces out of
// an IBAN, codes upper-cased), the amount parsed with the currency's
// exponent, the beneficiary and purpose checked against the corridor, and
// the fee and rail of the corridor. The first failure is answered, naming
// its field.
func decodeRemittanceCreate(raw []byte, allow callbackurl.AllowList) (remittance.RemittanceInput, error) {
	var req struct {
		PayerID, Currency, Purpose, CallbackURL string
		Beneficiary                             stringMembers
		Amount                                  amountText
	}
	err := decodeObject(raw, []field{
		{name: "payer_id", required: true, into: &req.PayerID},
		{name: "beneficiary", required: true, into: &req.Beneficiary, itemsMax: beneficiaryMembersMax},
		{name: "amount", required: true, into: &req.Amount},
		{name: "currency", required: true, into: &req.Currency},
		{name: "purpose", into: &req.Purpose},
		{name: "callback_url", into: &req.CallbackURL},
	})
	if err != nil {
		return remittance.RemittanceInput{}, err
	}
	r := rules.RemittanceRequest{PayerID: req.PayerID, Beneficiary: beneficiaryOf(req.Beneficiary),
		Currency: req.Currency, Purpose: req.Purpose}
	r.Normalize()
	cur, err := parseCurrency("currency", r.Currency)
	if err != nil {
		return remittance.RemittanceInput{}, err
	}
	if r.Amount, err = postings.ParseAmount(string(req.Amount), cur); err != nil {
		return remittance.RemittanceInput{}, postings.WithField(err, "amount")
	}
	if req.CallbackURL != "" {
		if err := checkCallbackURL("callback_url", req.CallbackURL, allow); err != nil {
			return remittance.RemittanceInput{}, err
		}
	}
	cor, err := rules.ValidateRemittance(&r)
	if err != nil {
		return remittance.RemittanceInput{}, err
	}
	fee, err := rules.RemittanceFeeFact(cor, r.Amount, cur)
	if err != nil {
		return remittance.RemittanceInput{}, err
	}
	beneficiary, err := json.Marshal(r.Beneficiary)
	if err != nil {
		return remittance.RemittanceInput{}, err
	}
	return remittance.RemittanceInput{PayerID: r.PayerID, Beneficiary: beneficiary, Amount: r.Amount, Fee: fee.Amount,
		FeeFact: &fee, Currency: cur.Code, Purpose: r.Purpose, Rail: string(cor.Rail), CallbackURL: req.CallbackURL}, nil
}

// handleRemittanceCreate answers POST /shop/remittance/create: records the
// remittance in SUBMITTED and debits the amount (REMIT_OUT) and the fee
// (FEE) from the funding account of its currency, in one transaction.
func handleRemittanceCreate(l Remittances, allow callbackurl.AllowList) gin.HandlerFunc {
	return func(c *gin.Context) {
		in, err := decodeRemittanceCreate(bodyOf(c), allow)
		if err != nil {
			writeError(c, err)
			return
		}
		r, err := l.CreateRemittance(c.Request.Context(), merchantOf(c).ID, in, idempotencyOf(c))
		writeResult(c, views.NewRemittanceCreated, r, err)
	}
}

// handleRemittanceQuery answers GET /shop/remittance/query?txId=. An
// unknown txId and another merchant's are the same 1101.
func handleRemittanceQuery(l Remittances) gin.HandlerFunc {
	return func(c *gin.Context) {
		txID, err := queryParam(c, "txId")
		if err != nil {
			writeError(c, err)
			return
		}
		if !postings.IsRefText(txID) {
			writeError(c, postings.FieldErrorf("txId", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'"))
			return
		}
		r, err := l.Remittance(c.Request.Context(), merchantOf(c).ID, txID)
		if err != nil {
			writeError(c, err)
			return
		}
		v, err := views.NewRemittance(r)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, v)
	}
}
