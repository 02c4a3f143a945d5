package api

// Names of the classes issue 27 found screening blind to, added to the
// HTTP fuzz run's edge strings (fuzz_http_test.go) so that every route and
// member meets them: default-ignorable code points (the Hangul fillers,
// letters that show as nothing, and the rest: joiners, soft hyphen,
// variation selectors, tag characters, the Khmer and Mongolian ones),
// small capitals, modifier letters as separators and superscripts. A
// beneficiary name with a default-ignorable must be a 400 naming the
// field; the run checks that no such value is ever a 5xx.
var fuzzNameClasses = []string{
	`"Ivan\u3164Petrov"`, `"Iv\u115fan Petrov"`, `"Ivan Petrov\uffa0"`, `"Iv\u1160an Petrov"`, `"\u3164"`,
	`"Iv\u034fan"`, `"Ivan\ufe0f"`, `"Ivan\udb40\udc41"`, `"Ivan\udb40\udd00"`, `"Iva\u180bn"`, `"Iva\u17b4n"`,
	`"Iv\u200dan"`, `"Iv\u200can"`, `"Ivan\ud82f\udca0"`, `"Iv\ufff0an"`,
	`"ɪᴠᴀɴ ᴘᴇᴛʀᴏᴠ"`, `"\ua7aeᴠᴀɴ ᴘᴇᴛʀᴏᴠ"`, `"ᴀᴄᴍᴇ ᴛʀᴀᴅɪɴɢ"`, `"Ivan\u02ccPetrov"`, `"Iv\u02ccan Petrov"`,
	`"Ivan\u02d0Petrov"`, `"ᴵᵛᵃⁿ ᴾᵉᵗʳᵒᵛ"`,
}

func init() { fuzzEdgeStrings = append(fuzzEdgeStrings, fuzzNameClasses...) }
