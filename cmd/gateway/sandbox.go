package main

import "flag"

// The sandbox's part of the operator's commands (docs/api.md, "The
// sandbox"): `merchant create --test` makes a test merchant, which drives
// its own cards and remittances through /shop/sandbox. The flag is kept
// here, apart from the commands' file, and is final: a merchant's test flag
// never changes (sql/0013_sandbox.sql).

// testMerchantFlag adds --test to merchant create.
func testMerchantFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("test", false, "create a test merchant: /shop/sandbox drives its cards and remittances; its money is never live (cannot be changed later)")
}
