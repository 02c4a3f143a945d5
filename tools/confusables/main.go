// Command confusables writes the Unicode tables that sanctions screening
// (internal/remittance/rules/screening_key.go) and the name validator
// (internal/remittance/rules/validate.go) read, generated from Unicode's own
// data files, never typed by hand:
//
//   - confusables_table.go: every character of Unicode's confusables table
//     (UTS #39, confusables.txt) with its prototype, so that screening
//     compares names by their TR39 skeleton: a Cyrillic "А", a Greek "Ο", an
//     Armenian "օ" or a Cherokee "Ꭺ" read as the Latin letter they imitate,
//     and look-alikes within every other script as their prototype too.
//   - name_classes_table.go: the Default_Ignorable_Code_Point property
//     (DerivedCoreProperties.txt), refused in a name and dropped from a key,
//     and the letter folds (UnicodeData.txt names): Latin small capitals
//     ("LATIN LETTER SMALL CAPITAL N" is "n") and the modifier letters named
//     after Latin letters that NFKC leaves alone.
//
// The confusables come from go.mau.fi/util/confusable, a maintained Go
// package generated from Unicode's confusables.txt (its
// unicodeurls.UnicodeVersion says which release); with -txt they are read
// from a confusables.txt file instead. The character database files come
// from -ucd, by default Debian's unicode-data package (apt-get install
// unicode-data), whose version should be the one of Go's own unicode
// tables (unicode.Version) that screening uses for letter classes. This is
// a module of its own so that the gateway does not depend on these at
// build or run time: the output is checked in. Regenerate with
//
//	cd tools/confusables && go run .
package main

import (
	"flag"
	"log"
)

func main() {
	out := flag.String("o", "../../internal/remittance/rules/confusables_table.go", "the confusables table to write")
	classesOut := flag.String("classes-o", "../../internal/remittance/rules/name_classes_table.go", "the name classes table to write")
	txt := flag.String("txt", "", "read this confusables.txt instead of the go.mau.fi/util table")
	ucd := flag.String("ucd", "/usr/share/unicode", "the folder of DerivedCoreProperties.txt and UnicodeData.txt (Debian: unicode-data)")
	flag.Parse()

	n, source, err := writeConfusables(*out, *txt)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%d confusables from %s", n, source)
	n, source, err = writeNameClasses(*classesOut, *ucd)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%d default-ignorable ranges and letter folds from %s", n, source)
}
