package registry

import "fmt"

// Restriction narrows the tools a scope inherits from its parent. It never
// touches the tools registered on the scope itself.
type Restriction struct {
	// Allow, when non-nil, keeps only these inherited tools.
	Allow []string `json:"allow,omitempty"`
	// Deny removes these inherited tools.
	Deny []string `json:"deny,omitempty"`
}

func (r Restriction) String() string {
	return fmt.Sprintf("allow=%v deny=%v", r.Allow, r.Deny)
}
