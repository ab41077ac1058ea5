package wasmhost

// slabSize is how many records fromSlab allocates at once.
const slabSize = 16

// fromSlab returns a fresh record from *rest, the unused part of the last
// slab, allocating a new slab of slabSize when it is empty. A record is
// never handed out twice: the ones that must stay no-ops when used late
// (an idle loan's handover, a call's done callback) are made this way,
// one allocation per slabSize of them instead of one each. The caller
// owns rest (one goroutine at a time).
func fromSlab[T any](rest *[]T) *T {
	if len(*rest) == 0 {
		*rest = make([]T, slabSize)
	}
	v := &(*rest)[0]
	*rest = (*rest)[1:]
	return v
}
