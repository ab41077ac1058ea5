package shape

// scanner reads valid JSON in place: shaping a value costs a pass over its
// bytes and the text it writes, never a tree of it.
type scanner []byte

// ws returns the first index from i that is not insignificant space.
func (j scanner) ws(i int) int {
	for i < len(j) && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts at i.
func (j scanner) stringEnd(i int) int {
	for k := i + 1; k < len(j); k++ {
		switch j[k] {
		case '\\':
			k++
		case '"':
			return k + 1
		}
	}
	return len(j)
}

// end returns the index just past the value that starts at i.
func (j scanner) end(i int) int {
	switch j[i] {
	case '"':
		return j.stringEnd(i)
	case '{', '[':
		depth := 0
		for k := i; k < len(j); {
			switch j[k] {
			case '"':
				k = j.stringEnd(k)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return k + 1
				}
			}
			k++
		}
		return len(j)
	}
	k := i
	for k < len(j) && j[k] != ',' && j[k] != ']' && j[k] != '}' && j[k] != ' ' && j[k] != '\t' && j[k] != '\n' && j[k] != '\r' {
		k++
	}
	return k
}

// count returns the number of items or keys of the container at i.
func (j scanner) count(i int) int {
	k := j.ws(i + 1)
	if k >= len(j) || j[k] == ']' || j[k] == '}' {
		return 0
	}
	n := 0
	for k < len(j) {
		if j[i] == '{' {
			k = j.ws(j.stringEnd(k)) + 1
		}
		k = j.ws(j.end(j.ws(k)))
		n++
		if k >= len(j) || j[k] != ',' {
			break
		}
		k = j.ws(k + 1)
	}
	return n
}

// describe says what the value at i is, for markers.
func (j scanner) describe(i int) string {
	if i >= len(j) {
		return "a value"
	}
	switch j[i] {
	case '[':
		return "an array of " + count(j.count(i), "item")
	case '{':
		return "an object of " + count(j.count(i), "key")
	case '"':
		return "a string of " + count(j.stringEnd(i)-i-2, "byte")
	}
	return "a value"
}
