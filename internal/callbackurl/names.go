package callbackurl

import (
	"fmt"
	"net/netip"
	"strings"
)

// Reserved names. A name is judged by the address it surely names when
// there is one (the hosts file, cloud metadata), so that the allow list
// treats it exactly as that address; else by whether public DNS can
// answer it at all. docs/callbacks.md §7 lists them.

// hostsNames are answered from /etc/hosts (the defaults of glibc-based
// distributions and macOS) before DNS, with these addresses. localhost
// has both loopback addresses, as it resolves when dialled, so that
// submission and connection judge the same set.
var hostsNames = map[string][]netip.Addr{
	"localhost": {v4loop, v6loop}, "localhost.localdomain": {v4loop, v6loop},
	"localhost4": {v4loop}, "localhost4.localdomain4": {v4loop},
	"localhost6": {v6loop}, "localhost6.localdomain6": {v6loop}, "ip6-localhost": {v6loop}, "ip6-loopback": {v6loop},
	"ip6-localnet": {netip.MustParseAddr("fe00::")}, "ip6-mcastprefix": {netip.MustParseAddr("ff00::")},
	"ip6-allnodes": {netip.MustParseAddr("ff02::1")}, "ip6-allrouters": {netip.MustParseAddr("ff02::2")},
	"ip6-allhosts": {netip.MustParseAddr("ff02::3")}, "broadcasthost": {netip.MustParseAddr("255.255.255.255")},
}

var (
	v4loop     = netip.MustParseAddr("127.0.0.1")
	v6loop     = netip.MustParseAddr("::1")
	metadataV4 = netip.MustParseAddr("169.254.169.254")
)

// metadataNames name a cloud's instance metadata service (169.254.169.254
// or a sibling link-local address), from inside the cloud.
var metadataNames = map[string]bool{
	"metadata": true, "metadata.google.internal": true, "metadata.goog": true,
	"instance-data": true, "instance-data.ec2.internal": true,
	"metadata.azure.internal": true, "metadata.tencentyun.com": true,
}

// specialSuffixes are top-level (or, for arpa, infrastructure) domains
// that public DNS never answers with a host, so that only a local
// resolver can: an internal host. The value is the source.
var specialSuffixes = map[string]string{
	"test":         "RFC 6761",
	"example":      "RFC 6761",
	"invalid":      "RFC 6761",
	"local":        "RFC 6762, mDNS",
	"onion":        "RFC 7686",
	"alt":          "RFC 9476",
	"arpa":         "RFC 3172: home.arpa (RFC 8375), ipv4only.arpa (RFC 8880), reverse zones",
	"internal":     "ICANN, reserved for private use",
	"intranet":     "RFC 6762 appendix G",
	"private":      "RFC 6762 appendix G",
	"corp":         "RFC 6762 appendix G; ICANN name collision",
	"home":         "RFC 6762 appendix G; ICANN name collision",
	"lan":          "RFC 6762 appendix G",
	"localdomain":  "hosts-file convention",
	"localdomain6": "hosts-file convention",
	"svc":          "Kubernetes in-cluster service names",
}

// checkName judges a syntactically valid host name, lower case and
// without its trailing dot, at submission and again when dialling.
func checkName(allow AllowList, name string) error {
	labels := strings.Split(name, ".")
	tld := labels[len(labels)-1]
	switch {
	case hostsNames[name] != nil:
		for _, a := range hostsNames[name] {
			if err := checkAddr(allow, a, name); err != nil {
				return err
			}
		}
		return nil
	case tld == "localhost": // RFC 6761 §6.3: loopback, either family
		return checkName(allow, "localhost")
	case metadataNames[name]:
		return checkAddr(allow, metadataV4, name)
	case allow.AllowPrivate:
		return nil // local development: a local resolver's names are its own
	case len(labels) == 1:
		return &Error{Reason: fmt.Sprintf("names %s, a single-label name (resolved through local search domains), which callbacks may not reach: use a fully qualified name", name)}
	}
	for i := len(labels) - 1; i >= 1; i-- {
		suffix := strings.Join(labels[i:], ".")
		if src, ok := specialSuffixes[suffix]; ok {
			return &Error{Reason: fmt.Sprintf("names %s, in the special-use domain .%s (%s) that public DNS does not answer, which callbacks may not reach", name, suffix, src)}
		}
	}
	return nil
}
