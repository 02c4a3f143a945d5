package delivery

// ClaimSQL is the claim's statement, for the plan test (claim_plan_test.go).
const ClaimSQL = claimSQL
