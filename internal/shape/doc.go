// Package shape fits what a run_code program produced (its logs and its
// result) into the model budget: the bytes of text a model is shown
// (api.Limits.ModelBytes). Within the budget the text is the whole output;
// past it, the text is cut structurally, never mid-token: the result's JSON
// stays valid JSON (long arrays keep their first items and a
// "… N more items" marker, long strings a head and a byte count, objects
// past a depth one line saying what they held), logs keep their first and
// last lines and a count of the lines cut, and one closing line says what
// was cut and how to get less.
//
// The package only renders text. The full value stays with the host (the
// run's api.Result value); the host's hard cap on it is
// api.Limits.OutputBytes, enforced by the sandbox before this package sees
// anything. It renders with registry.Text and imports nothing that runs code.
package shape
