package receiver

import "time"

// A callback signed with testKey at testTS, checked at testNow (the same
// fixture as package signature's tests).
const (
	testKey = "sk_test_0123456789abcdefghijklmnopqrstuv"
	testTS  = "1736933400"
)

var testNow = time.Unix(1736933400, 0)
