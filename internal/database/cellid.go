package database

// idRandomChars is the length of the random part of the gateway's ids
// (crd_…, auth_…, rmt_…) after their prefix: 20 characters of [a-z0-9].
const idRandomChars = 20

// CellID mints an id of prefix ("crd_", "auth_", "rmt_") in cell ("" without
// cells): the cell's two-character name takes the place of the random
// part's first two characters, so that the id keeps its length and its
// alphabet (every reader and pattern of crd_[a-z0-9]{20} still holds) and a
// router finds its cell without a lookup (docs/scaling.md, "Ids"). Without
// a cell the id is exactly what it always was.
func CellID(prefix, cell string) string {
	return prefix + cell + RandomID(idRandomChars-len(cell))
}
