package api

// Reserved callback destinations (issue 27, point 6) join the HTTP fuzz
// run's values: IPv6 forms embedding internal IPv4 (NAT64, local-use
// NAT64, SIIT, IPv4-compatible, 6to4, Teredo), the registry's reserved
// IPv6 and IPv4 blocks, reserved names and numeric IPv4 forms. Each must
// be a 400, never a 500 or a stored callback. Kept in its own file so
// that other classes can be added beside it without conflicts.
var fuzzReservedCallbackURLs = []string{
	`"http://[64:ff9b::a00:1]/cb"`, `"http://[64:ff9b::a9fe:a9fe]/"`, `"http://[64:ff9b:1::a00:1]/"`, `"http://[::ffff:0:7f00:1]/"`,
	`"http://[::a00:1]/"`, `"http://[::ffff:a9fe:a9fe]/"`, `"http://[2002:c0a8:101::1]/"`, `"http://[2002:7f00:1::]/"`,
	`"http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/"`, `"http://[fec0::1]/"`, `"http://[100::1]/"`, `"http://[2001:db8::1]/"`,
	`"http://[2001:10::1]/"`, `"http://[2001:20::1]/"`, `"http://[3fff::1]/"`, `"http://[5f00::1]/"`, `"http://[fd00:ec2::254]/"`,
	`"http://[ff02::1]/"`, `"http://198.18.0.1/"`, `"http://192.0.0.170/"`, `"http://192.88.99.1/"`, `"http://203.0.113.9/"`,
	`"http://localhost6.localdomain6/"`, `"http://ip6-loopback/"`, `"http://metadata/"`, `"http://instance-data./"`,
	`"http://metadata.azure.internal/"`, `"http://printer.local/"`, `"http://router.home.arpa/"`, `"http://shop.test/"`,
	`"http://0177.0.0.1/"`, `"http://017700000001/"`,
}

func init() { fuzzEdgeStrings = append(fuzzEdgeStrings, fuzzReservedCallbackURLs...) }
