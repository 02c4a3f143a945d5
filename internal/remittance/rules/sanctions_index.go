package rules

import (
	"hash/maphash"
	"slices"
	"strings"
)

// The index of a sanctions list: for each key case, the hashes of an
// entry's rule keys (the words joined by spaces, the sorted set of its
// words, the words joined with no space) lead to the entry. Screen then
// checks each candidate by its key, so a hash collision never makes a hit.
//
// An index of strings held three copies of every key per case and a slice
// per key: about 1 KiB per entry, 145 MB for an 8 MiB list. Hashes in one
// map with chains in one slice hold about 100 bytes per entry, and
// building it allocates only the keys of the entry at hand.

// keyIndex maps a key hash to its chain of links: links[k] is the entry of
// link k and next[k] the link after it in its chain (-1 ends it). An entry
// has one link per distinct rule key per case.
type keyIndex struct {
	heads map[uint64]int32
	next  []int32
	links []int32
}

// indexSeed seeds the key hashes; a list lives in one process only.
var indexSeed = maphash.MakeSeed()

// ruleHashes are the hashes of the three rule keys of a name's words in
// case c, with duplicates (a one-word name's three keys are one) removed.
func ruleHashes(c keyCase, words []string) []uint64 {
	var h maphash.Hash
	h.SetSeed(indexSeed)
	sum := func(ws []string, sep string) uint64 {
		h.Reset()
		h.WriteByte(byte(c))
		for i, w := range ws {
			if i > 0 {
				h.WriteString(sep)
			}
			h.WriteString(w)
		}
		return h.Sum64()
	}
	exact := sum(words, " ")
	out := []uint64{exact}
	if set := wordSet(words); !slices.Equal(set, words) {
		out = append(out, sum(set, " "))
	}
	if len(words) > 1 {
		out = append(out, sum(words, ""))
	}
	return out
}

// add indexes entry i under its keys of both cases.
func (x *keyIndex) add(i int32, keys *[keyCases][]string) {
	if x.heads == nil {
		x.heads = map[uint64]int32{}
	}
	for c := keyUpper; c < keyCases; c++ {
		for _, h := range ruleHashes(c, keys[c]) {
			link := int32(len(x.links))
			x.links = append(x.links, i)
			head, ok := x.heads[h]
			if !ok {
				head = -1
			}
			x.next = append(x.next, head)
			x.heads[h] = link
		}
	}
}

// candidates calls f with each entry one of words' rule keys in case c
// may match (an entry may come more than once).
func (x *keyIndex) candidates(c keyCase, words []string, f func(int32)) {
	for _, h := range ruleHashes(c, words) {
		for link, ok := x.heads[h]; ok && link >= 0; link = x.next[link] {
			f(x.links[link])
		}
	}
}

// keysMatch reports whether two keys agree by one of the matching rules:
// equal, the same set of words, or equal with the spaces removed.
func keysMatch(a, b []string) bool {
	return slices.Equal(a, b) || slices.Equal(wordSet(a), wordSet(b)) || strings.Join(a, "") == strings.Join(b, "")
}

// wordSet is the sorted set of the words of a key (a new slice).
func wordSet(key []string) []string {
	words := slices.Clone(key)
	slices.Sort(words)
	return slices.Compact(words)
}
