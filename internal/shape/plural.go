package shape

import "strconv"

// count writes n and noun, in the plural unless n is 1: "1 key", "2 keys".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
