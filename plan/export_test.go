package plan

// MaxNest is maxNest, for the tests of the nesting bound.
const MaxNest = maxNest
