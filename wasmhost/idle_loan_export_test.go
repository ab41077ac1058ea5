package wasmhost

// LoanSlab is how many loans a run allocates at once (idle.go).
const LoanSlab = slabSize
